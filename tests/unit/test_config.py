"""The configuration is checked at start-up: every problem is one line naming the key."""

from __future__ import annotations

import ipaddress
import os
from pathlib import Path

import pytest

from bot.config import Config, ConfigError, WebConfig, WebhookConfig, load_config
from bot.engine.settings import Settings

REPO = Path(__file__).resolve().parents[2]
TOKEN = "123456789:AAEexampleSECRETtokenPART_-xyz"


def refused(tmp_path: Path, text: str, environ: dict[str, str] | None = None) -> str:
    """The one-line error that loading a config file with ``text`` raises."""
    path = tmp_path / "config.toml"
    path.write_text(text, encoding="utf-8")
    with pytest.raises(ConfigError) as caught:
        load_config(path, environ=environ or {})
    message = str(caught.value)
    assert "\n" not in message
    return message


def test_the_example_config_is_valid_and_holds_the_defaults() -> None:
    config = load_config(REPO / "config.example.toml", environ={})
    assert config == Config()


def test_every_key_of_the_file_reaches_the_config(tmp_path: Path) -> None:
    path = tmp_path / "config.toml"
    path.write_text(
        '[database]\nurl = "postgresql://niuniu@db:5432/niuniu"\n'
        f'[telegram]\ntoken = "{TOKEN}"\nbase_url = "http://127.0.0.1:8081/bot"\n'
        'mode = "webhook"\noperators = [7, 8]\n'
        '[telegram.webhook]\nlisten = "127.0.0.1"\nport = 8000\n'
        'public_url = "https://bot.example"\nsecret_token = "s3cret_-"\npath = "hook"\n'
        "[bot]\nsweep_seconds = 0.5\nboard_edit_seconds = 2\ndelivery_lease_seconds = 4.5\n"
        'admin_cache_seconds = 30\nlog_level = "debug"\nlog_format = "json"\n'
        '[web]\nlisten = "127.0.0.1:9090"\npublic_url = "https://ops.example/niuniu"\n'
        "console = true\nminiapp = true\n"
        '[game]\nbet_seconds = 25\nmin_bet = "2"\nrake = "4%"\nquick_bets = ["5", "10"]\n',
        encoding="utf-8",
    )
    config = load_config(path, environ={})
    assert config == Config(
        database_url="postgresql://niuniu@db:5432/niuniu",
        telegram_token=TOKEN,
        telegram_base_url="http://127.0.0.1:8081/bot",
        mode="webhook",
        webhook=WebhookConfig(
            listen="127.0.0.1",
            port=8000,
            public_url="https://bot.example",
            secret_token="s3cret_-",
            path="hook",
        ),
        web=WebConfig(
            host="127.0.0.1",
            port=9090,
            public_url="https://ops.example/niuniu",
            console=True,
            miniapp=True,
        ),
        operators=frozenset({7, 8}),
        game=Settings(bet_seconds=25, min_bet=200, rake_bps=400, quick_bets=(500, 1000)),
        sweep_seconds=0.5,
        board_edit_seconds=2.0,
        delivery_lease_seconds=4.5,
        admin_cache_seconds=30.0,
        log_level="DEBUG",
        log_format="json",
    )
    assert config.bot_id == 123456789
    assert config.web.enabled and config.web.listen == "127.0.0.1:9090"


@pytest.mark.parametrize(
    "key", ["sweep_seconds", "board_edit_seconds", "delivery_lease_seconds", "admin_cache_seconds"]
)
@pytest.mark.parametrize("value", ["-1", "0", "0.0", "-0.5"])
def test_a_zero_or_negative_interval_is_refused_naming_the_key(
    tmp_path: Path, key: str, value: str
) -> None:
    message = refused(tmp_path, f"[bot]\n{key} = {value}\n")
    assert message == f"[bot] {key} must be more than 0, got {value}"


def test_an_infinite_interval_is_refused(tmp_path: Path) -> None:
    message = refused(tmp_path, "[bot]\nsweep_seconds = inf\n")
    assert message == "[bot] sweep_seconds must be a finite number, got inf"


@pytest.mark.parametrize("port", [0, -1, 65536, 70000])
def test_a_port_out_of_range_is_refused(tmp_path: Path, port: int) -> None:
    message = refused(tmp_path, f"[telegram.webhook]\nport = {port}\n")
    assert message == f"[telegram.webhook] port must be a port number from 1 to 65535, got {port}"


@pytest.mark.parametrize("port", [1, 65535])
def test_the_ports_at_the_ends_of_the_range_are_accepted(tmp_path: Path, port: int) -> None:
    path = tmp_path / "config.toml"
    path.write_text(f"[telegram.webhook]\nport = {port}\n", encoding="utf-8")
    assert load_config(path, environ={}).webhook.port == port


@pytest.mark.parametrize(
    ("text", "message"),
    [
        (
            '[bot]\nsweep_seconds = "abc"\n',
            '[bot] sweep_seconds must be a number, like 1.5, got "abc"',
        ),
        (
            '[bot]\nsweep_seconds = "1"\n',
            '[bot] sweep_seconds must be a number, like 1.5, got "1"',
        ),
        (
            '[telegram.webhook]\nport = "8443"\n',
            '[telegram.webhook] port must be a whole number, got "8443"',
        ),
        ("[telegram.webhook]\nport = 80.5\n", "[telegram.webhook] port must be a whole number"),
        ("[telegram.webhook]\nport = true\n", "[telegram.webhook] port must be a whole number"),
        (
            "[telegram]\nmode = 1\n",
            "[telegram] mode must be 'polling' or 'webhook', got 1",
        ),
        (
            '[telegram]\noperators = [1, "x"]\n',
            '[telegram] operators (item 2) must be a whole number, got "x"',
        ),
        (
            "[telegram]\noperators = 5\n",
            "[telegram] operators must be a list, like [1, 2], got 5",
        ),
        (
            "[bot]\nlog_level = 3\n",
            '[bot] log_level must be text in quotes, like "abc", got 3',
        ),
        (
            "bot = 3\n",
            "[bot] must be a section (a table), not a single value, got 3",
        ),
    ],
)
def test_a_value_of_the_wrong_type_names_the_key_and_the_type_expected(
    tmp_path: Path, text: str, message: str
) -> None:
    got = refused(tmp_path, text)
    assert got.startswith(message)
    assert "invalid literal" not in got and "Input should" not in got


@pytest.mark.parametrize(
    ("text", "message"),
    [
        (
            '[databse]\nurl = "sqlite:///x.db"\n',
            "unknown section [databse]; did you mean [database]?",
        ),
        ("[telegarm]\n", "unknown section [telegarm]; did you mean [telegram]?"),
        ("[Bot]\n", "unknown section [Bot]; did you mean [bot]?"),
        ("[games]\n", "unknown section [games]; did you mean [game]?"),
        (
            "[telegram.webhok]\nport = 1\n",
            "unknown section [telegram.webhok]; did you mean [telegram.webhook]?",
        ),
        (
            "[logging]\n",
            "unknown section [logging] (the sections are [bot], [database], [game], [telegram], "
            "[web])",
        ),
    ],
)
def test_an_unknown_section_is_refused_with_the_nearest_name(
    tmp_path: Path, text: str, message: str
) -> None:
    assert refused(tmp_path, text) == message


@pytest.mark.parametrize(
    ("text", "message"),
    [
        (
            "[bot]\nsweep_second = 1\n",
            "unknown key [bot] sweep_second; did you mean sweep_seconds?",
        ),
        ('[telegram]\ntokn = "1:a"\n', "unknown key [telegram] tokn; did you mean token?"),
        (
            "[telegram]\noperator = [1]\n",
            "unknown key [telegram] operator; did you mean operators?",
        ),
        (
            "[telegram]\nwebhok = 1\n",
            "unknown key [telegram] webhok; did you mean [telegram.webhook]?",
        ),
        (
            "[telegram.webhook]\nprot = 1\n",
            "unknown key [telegram.webhook] prot; did you mean port?",
        ),
        ('[database]\nulr = "x"\n', "unknown key [database] ulr; did you mean url?"),
        ('[game]\nmin_bett = "1"\n', "unknown key [game] min_bett; did you mean min_bet?"),
        ('[game]\nrak = "5%"\n', "unknown key [game] rak; did you mean rake?"),
        ("sweep_seconds = 1\n", "key sweep_seconds is outside every section; it belongs in [bot]"),
    ],
)
def test_an_unknown_key_is_refused_with_the_nearest_name(
    tmp_path: Path, text: str, message: str
) -> None:
    assert refused(tmp_path, text) == message


def test_an_unknown_key_far_from_every_name_lists_the_keys(tmp_path: Path) -> None:
    assert refused(tmp_path, "[database]\nzzz = 1\n") == (
        "unknown key [database] zzz (the keys of [database] are url)"
    )
    assert refused(tmp_path, '[game]\nzzz = "1"\n').startswith(
        "unknown key [game] zzz (the keys are the settings of /set: bid_seconds, "
    )


def test_game_values_are_checked_as_set_checks_them(tmp_path: Path) -> None:
    assert refused(tmp_path, '[game]\nbet_seconds = "abc"\n') == (
        "[game] bet_seconds: 'abc' is not a whole number of seconds"
    )
    assert refused(tmp_path, "[game]\nbet_seconds = 0\n") == (
        "[game] bet_seconds must be between 1 and 3600"
    )


def test_two_problems_name_the_first_and_count_the_rest(tmp_path: Path) -> None:
    message = refused(tmp_path, "[bot]\nsweep_seconds = -1\nboard_edit_seconds = 0\n")
    assert message == "[bot] sweep_seconds must be more than 0, got -1 (and 1 more problem)"


def test_a_directory_as_the_config_file_is_one_line(tmp_path: Path) -> None:
    with pytest.raises(ConfigError) as caught:
        load_config(tmp_path, environ={})
    assert str(caught.value) == f"config file {tmp_path} is a directory, not a file"


def test_a_missing_config_file_is_one_line(tmp_path: Path) -> None:
    missing = tmp_path / "nope.toml"
    with pytest.raises(ConfigError) as caught:
        load_config(missing, environ={})
    assert str(caught.value) == f"config file {missing} does not exist"
    with pytest.raises(ConfigError) as caught:
        load_config(None, environ={"NIUNIU_CONFIG": str(missing)})
    assert str(caught.value) == f"config file {missing} (NIUNIU_CONFIG) does not exist"


def test_a_config_path_through_a_file_is_one_line(tmp_path: Path) -> None:
    (tmp_path / "file").write_text("", encoding="utf-8")
    path = tmp_path / "file" / "config.toml"
    with pytest.raises(ConfigError) as caught:
        load_config(path, environ={})
    assert str(caught.value) == f"config file {path} cannot be read: Not a directory"


@pytest.mark.skipif(os.geteuid() == 0, reason="root reads every file whatever its mode")
def test_an_unreadable_config_file_is_one_line(tmp_path: Path) -> None:
    path = tmp_path / "config.toml"
    path.write_text("[bot]\n", encoding="utf-8")
    path.chmod(0)
    with pytest.raises(ConfigError) as caught:
        load_config(path, environ={})
    assert str(caught.value) == f"config file {path} cannot be read: permission denied"


def test_a_config_file_that_is_not_utf8_is_one_line(tmp_path: Path) -> None:
    path = tmp_path / "config.toml"
    path.write_bytes(b'[bot]\nlog_level = "\xff"\n')
    with pytest.raises(ConfigError) as caught:
        load_config(path, environ={})
    assert str(caught.value) == f"config file {path} is not UTF-8 text (byte 0xff at offset 19)"


def test_a_byte_order_mark_is_accepted(tmp_path: Path) -> None:
    path = tmp_path / "config.toml"
    path.write_bytes(b'\xef\xbb\xbf[bot]\nlog_level = "warning"\n')
    assert load_config(path, environ={}).log_level == "WARNING"


def test_a_toml_syntax_error_is_one_line(tmp_path: Path) -> None:
    assert refused(tmp_path, "[bot\n") == (
        f"config file {tmp_path / 'config.toml'} is not valid TOML: Expected ']' at the end "
        "of a table declaration (at line 1, column 5)"
    )


@pytest.mark.parametrize(
    ("variable", "value", "message"),
    [
        ("NIUNIU_MODE", "poll", "NIUNIU_MODE must be 'polling' or 'webhook', got \"poll\""),
        (
            "NIUNIU_LOG_LEVEL",
            "loud",
            "NIUNIU_LOG_LEVEL must be one of DEBUG, INFO, WARNING, ERROR, CRITICAL (in any case),"
            ' got "loud"',
        ),
        (
            "NIUNIU_DATABASE_URL",
            "mysql://root:pw@db/niuniu",
            "NIUNIU_DATABASE_URL names mysql; the bot runs on sqlite or postgresql",
        ),
        (
            "NIUNIU_DATABASE_URL",
            "niuniu.db",
            "NIUNIU_DATABASE_URL is not a database URL "
            "(sqlite:///niuniu.db or postgresql://user@host/name)",
        ),
        (
            "NIUNIU_TELEGRAM_BASE_URL",
            "api.telegram.org/bot",
            "NIUNIU_TELEGRAM_BASE_URL must start with http:// or https://, "
            'got "api.telegram.org/bot"',
        ),
        (
            "NIUNIU_TELEGRAM_TOKEN",
            TOKEN + " \n",
            "NIUNIU_TELEGRAM_TOKEN is not a bot token "
            "(digits, a colon, then letters, as @BotFather gives)",
        ),
    ],
)
def test_a_bad_environment_value_names_the_variable(
    tmp_path: Path, variable: str, value: str, message: str
) -> None:
    assert refused(tmp_path, "[bot]\n", {variable: value}) == message


def test_the_environment_overrides_the_file(tmp_path: Path) -> None:
    path = tmp_path / "config.toml"
    path.write_text(
        '[database]\nurl = "sqlite:///file.db"\n[telegram]\ntoken = "1:file"\n'
        'base_url = "http://file/bot"\n[bot]\nlog_level = "ERROR"\n',
        encoding="utf-8",
    )
    environ = {
        "NIUNIU_CONFIG": str(path),
        "NIUNIU_TELEGRAM_TOKEN": TOKEN,
        "NIUNIU_TELEGRAM_BASE_URL": "http://127.0.0.1:8081/bot",
        "NIUNIU_DATABASE_URL": "postgresql://postgres@127.0.0.1:5432/niuniu",
        "NIUNIU_MODE": "polling",
        "NIUNIU_LOG_LEVEL": "debug",
    }
    config = load_config(None, environ=environ)
    assert (config.telegram_token, config.telegram_base_url, config.database_url) == (
        TOKEN,
        "http://127.0.0.1:8081/bot",
        "postgresql://postgres@127.0.0.1:5432/niuniu",
    )
    assert (config.mode, config.log_level) == ("polling", "DEBUG")
    # An empty variable overrides nothing.
    empty = {key: "" for key in environ if key != "NIUNIU_CONFIG"}
    config = load_config(path, environ=empty)
    assert (config.telegram_token, config.database_url, config.log_level) == (
        "1:file",
        "sqlite:///file.db",
        "ERROR",
    )


def test_the_token_is_in_no_error_and_no_repr(tmp_path: Path) -> None:
    secret = TOKEN.partition(":")[2]
    for text in (
        f'[telegram]\ntoken = "{TOKEN} "\n',
        f'[telegram]\ntoken = "{TOKEN}"\nmode = "webhook"\n',
        f'[telegram]\ntoken = "{TOKEN}"\n[telegram.webhook]\nsecret_token = "{TOKEN}"\n',
    ):
        assert secret not in refused(tmp_path, text)
    assert secret not in refused(tmp_path, "[bot]\n", {"NIUNIU_TELEGRAM_TOKEN": f"{TOKEN}!"})
    config = Config(telegram_token=TOKEN, webhook=WebhookConfig(secret_token=secret))
    assert secret not in repr(config)
    assert secret not in repr(config.webhook)


# -- several bots: [telegram] tokens ---------------------------------------------------------

SECOND = "987654321:BBEsecondSECRETtokenPART_-abc"
THIRD = "555:CCthird"


def config_file(tmp_path: Path, text: str) -> Path:
    path = tmp_path / "config.toml"
    path.write_text(text, encoding="utf-8")
    return path


def test_more_tokens_follow_the_token_from_the_file_or_the_environment(tmp_path: Path) -> None:
    path = config_file(tmp_path, f'[telegram]\ntoken = "{TOKEN}"\ntokens = ["{SECOND}"]\n')
    config = load_config(path, environ={})
    assert (config.tokens, config.bot_id) == ((TOKEN, SECOND), 123456789)
    environ = {"NIUNIU_TELEGRAM_TOKEN": TOKEN, "NIUNIU_TELEGRAM_TOKENS": f"{SECOND}, {THIRD}"}
    assert load_config(None, environ=environ).tokens == (TOKEN, SECOND, THIRD)
    # The variable replaces the file's list, as any variable replaces its key.
    assert load_config(path, environ={"NIUNIU_TELEGRAM_TOKENS": THIRD}).tokens == (TOKEN, THIRD)


def test_tokens_alone_serve_without_a_token(tmp_path: Path) -> None:
    config = load_config(config_file(tmp_path, f'[telegram]\ntokens = ["{SECOND}", "{THIRD}"]\n'))
    assert config.tokens == config.require_tokens() == (SECOND, THIRD)
    assert (config.require_token(), config.bot_id) == (SECOND, 987654321)


def test_one_token_is_a_list_of_one_and_none_is_refused() -> None:
    assert Config(telegram_token=TOKEN).tokens == (TOKEN,)
    assert Config().tokens == ()
    with pytest.raises(ConfigError, match=r"no Telegram bot token: set NIUNIU_TELEGRAM_TOKEN"):
        Config().require_tokens()


@pytest.mark.parametrize(
    ("text", "environ", "message"),
    [
        (
            f'[telegram]\ntoken = "{TOKEN}"\ntokens = ["{SECOND}", "{TOKEN}"]\n',
            {},
            "[telegram] tokens names bot 123456789 which token names too: "
            "give each bot's token once",
        ),
        (
            f'[telegram]\ntokens = ["{SECOND}", "987654321:another"]\n',
            {},
            "[telegram] tokens names bot 987654321 twice: give each bot's token once",
        ),
        (
            "[bot]\n",
            {"NIUNIU_TELEGRAM_TOKEN": TOKEN, "NIUNIU_TELEGRAM_TOKENS": TOKEN},
            "NIUNIU_TELEGRAM_TOKENS names bot 123456789 which token names too: "
            "give each bot's token once",
        ),
        (
            f'[telegram]\ntokens = ["{SECOND}", "oops"]\n',
            {},
            "[telegram] tokens (item 2) is not a bot token "
            "(digits, a colon, then letters, as @BotFather gives)",
        ),
        (
            f'[telegram]\ntokens = "{SECOND}"\n',
            {},
            "[telegram] tokens must be a list, like [1, 2]",
        ),
        ('[telegram]\ntokens = [""]\n', {}, "[telegram] tokens (item 1) is not a bot token"),
    ],
)
def test_a_bot_given_twice_or_a_bad_token_is_refused(
    tmp_path: Path, text: str, environ: dict[str, str], message: str
) -> None:
    found = refused(tmp_path, text, environ)
    assert found.startswith(message), found
    for token in (TOKEN, SECOND):
        assert token.partition(":")[2] not in found


def test_the_tokens_are_in_no_repr() -> None:
    config = Config(telegram_token=TOKEN, telegram_tokens=(SECOND,))
    assert SECOND.partition(":")[2] not in repr(config)
    assert TOKEN.partition(":")[2] not in repr(config)


def test_the_database_password_is_in_no_error(tmp_path: Path) -> None:
    message = refused(tmp_path, '[database]\nurl = "mysql://root:hunter2@db/niuniu"\n')
    assert "hunter2" not in message


# -- [web] and [bot] log_format -------------------------------------------------------------


def test_the_web_server_is_off_unless_listen_is_given(tmp_path: Path) -> None:
    config = load_config(None, environ={})
    assert config.web == WebConfig() and not config.web.enabled and config.web.listen == ""
    path = tmp_path / "config.toml"
    path.write_text('[web]\nlisten = ""\nconsole = true\n', encoding="utf-8")
    assert not load_config(path, environ={}).web.enabled


@pytest.mark.parametrize(
    ("listen", "host", "port"),
    [
        ("127.0.0.1:9090", "127.0.0.1", 9090),
        ("0.0.0.0:1", "0.0.0.0", 1),
        ("localhost:65535", "localhost", 65535),
        ("[::1]:9090", "::1", 9090),
    ],
)
def test_web_listen_is_a_host_and_a_port(tmp_path: Path, listen: str, host: str, port: int) -> None:
    path = tmp_path / "config.toml"
    path.write_text(f'[web]\nlisten = "{listen}"\n', encoding="utf-8")
    web = load_config(path, environ={}).web
    assert (web.host, web.port, web.enabled, web.listen) == (host, port, True, listen)


@pytest.mark.parametrize(
    ("text", "message"),
    [
        (
            '[web]\nlisten = "9090"\n',
            '[web] listen must be "host:port", like "127.0.0.1:9090", or "" for no web server, '
            'got "9090"',
        ),
        (
            '[web]\nlisten = ":9090"\n',
            '[web] listen must be "host:port", like "127.0.0.1:9090", or "" for no web server, '
            'got ":9090"',
        ),
        (
            '[web]\nlisten = "http://127.0.0.1:9090"\n',
            '[web] listen must be "host:port", like "127.0.0.1:9090", or "" for no web server, '
            'got "http://127.0.0.1:9090"',
        ),
        (
            '[web]\nlisten = "127.0.0.1:0"\n',
            '[web] listen must end in a port number from 1 to 65535, got "127.0.0.1:0"',
        ),
        (
            '[web]\nlisten = "127.0.0.1:70000"\n',
            '[web] listen must end in a port number from 1 to 65535, got "127.0.0.1:70000"',
        ),
        ("[web]\nlisten = 9090\n", '[web] listen must be text in quotes, like "abc", got 9090'),
        (
            '[web]\npublic_url = "ops.example"\n',
            '[web] public_url must be "" or a URL that starts with http:// or https:// and '
            'names a host, got "ops.example"',
        ),
        (
            '[web]\npublic_url = "https://"\n',
            '[web] public_url must be "" or a URL that starts with http:// or https:// and '
            'names a host, got "https://"',
        ),
        ('[web]\nconsole = "yes"\n', '[web] console must be true or false, got "yes"'),
        ("[web]\nconsole = 1\n", "[web] console must be true or false, got 1"),
        ('[web]\nlisen = "127.0.0.1:9090"\n', "unknown key [web] lisen; did you mean listen?"),
        (
            '[bot]\nlog_format = "logfmt"\n',
            "[bot] log_format must be 'text' or 'json', got \"logfmt\"",
        ),
    ],
)
def test_a_wrong_web_or_log_format_value_is_one_line_naming_the_key(
    tmp_path: Path, text: str, message: str
) -> None:
    assert refused(tmp_path, text) == message


def test_the_environment_overrides_web_and_log_format(tmp_path: Path) -> None:
    path = tmp_path / "config.toml"
    path.write_text('[web]\nlisten = "127.0.0.1:1"\n[bot]\nlog_format = "text"\n', encoding="utf-8")
    environ = {
        "NIUNIU_WEB_LISTEN": "0.0.0.0:9100",
        "NIUNIU_WEB_PUBLIC_URL": "http://bot.internal:9100",
        "NIUNIU_WEB_CONSOLE": "TRUE",
        "NIUNIU_LOG_FORMAT": "json",
    }
    config = load_config(path, environ=environ)
    assert config.web == WebConfig("0.0.0.0", 9100, "http://bot.internal:9100", console=True)
    assert config.log_format == "json"
    for spelling, meaning in [("1", True), ("yes", True), ("false", False), ("0", False)]:
        assert load_config(path, environ={"NIUNIU_WEB_CONSOLE": spelling}).web.console is meaning


@pytest.mark.parametrize(
    ("variable", "value", "message"),
    [
        (
            "NIUNIU_WEB_LISTEN",
            "9100",
            'NIUNIU_WEB_LISTEN must be "host:port", like "127.0.0.1:9090", or "" for no web '
            'server, got "9100"',
        ),
        ("NIUNIU_WEB_CONSOLE", "maybe", 'NIUNIU_WEB_CONSOLE must be true or false, got "maybe"'),
        (
            "NIUNIU_WEB_PUBLIC_URL",
            "ftp://x",
            'NIUNIU_WEB_PUBLIC_URL must be "" or a URL that starts with http:// or https:// and '
            'names a host, got "ftp://x"',
        ),
        ("NIUNIU_LOG_FORMAT", "xml", "NIUNIU_LOG_FORMAT must be 'text' or 'json', got \"xml\""),
    ],
)
def test_a_bad_web_variable_names_the_variable(
    tmp_path: Path, variable: str, value: str, message: str
) -> None:
    assert refused(tmp_path, "[bot]\n", {variable: value}) == message


def test_trusted_proxies_are_networks_from_the_file_or_the_environment(tmp_path: Path) -> None:
    path = tmp_path / "config.toml"
    path.write_text('[web]\ntrusted_proxies = ["127.0.0.1", "10.0.0.0/8"]\n', encoding="utf-8")
    assert load_config(path, environ={}).web.trusted_proxies == (
        ipaddress.ip_network("127.0.0.1/32"),
        ipaddress.ip_network("10.0.0.0/8"),
    )
    environ = {"NIUNIU_WEB_TRUSTED_PROXIES": " ::1 , 172.16.0.0/12 "}
    assert load_config(path, environ=environ).web.trusted_proxies == (
        ipaddress.ip_network("::1/128"),
        ipaddress.ip_network("172.16.0.0/12"),
    )
    message = refused(tmp_path, '[web]\ntrusted_proxies = ["proxy.local"]\n')
    assert "[web] trusted_proxies" in message
    assert '"proxy.local", which is not an IP address or network' in message
