"""Each console page over HTTP on SQLite and PostgreSQL: what it shows, to whom, and what
it refuses."""

from __future__ import annotations

import html

from bot.service.game import Person
from tests.helpers.console import EVE, GROUP, OPERATOR, OTHER, Console
from tests.helpers.game import ADMIN, DEALER, PLAYERS


async def test_without_a_session_a_page_sends_the_browser_to_sign_in(console: Console) -> None:
    response = await console.client.get("/console/", allow_redirects=False)
    assert response.status == 303
    assert response.headers["Location"] == "/console/login"
    page = await console.text("/console/login")
    assert "Send <code>/console</code> to the bot" in page
    assert "telegram-widget.js" not in page  # http: the widget needs a real https domain


async def test_an_admin_sees_their_group_and_not_the_others(console: Console) -> None:
    await console.sign_in(ADMIN.id)
    page = await console.text("/console/")
    assert html.escape("Lucky <Table>") in page
    assert "Lucky <Table>" not in page  # escaped
    assert "Other group" not in page
    assert '<span class="label">Groups</span><span class="value">1</span>' in page


async def test_an_operator_sees_every_group(console: Console) -> None:
    await console.sign_in(OPERATOR)
    page = await console.text("/console/")
    assert "Other group" in page
    assert '<span class="label">Groups</span><span class="value">2</span>' in page
    assert '<span class="label">Open rounds</span><span class="value">1</span>' in page


async def test_the_overview_sums_todays_rake_from_the_outcomes(console: Console) -> None:
    await console.sign_in(ADMIN.id)
    rake = 0
    for round_id in console.history.settled:
        rake += sum(line.rake for line in await console.service.results(round_id))
    page = await console.text("/console/")
    row = page[page.index("<th>Rake</th>") :].split("</tr>")[0]
    today = row.split("<td>")[1].split("</td>")[0]
    assert today == f"{rake // 100}.{rake % 100:02d}"
    assert "<svg" in page and "<rect" in page
    # The second chart has today's rake as its own bar, its figure in the bar's title.
    income = page[page.index('aria-label="Rake, rebates and fees by day"') :]
    assert f"rake {rake // 100}.{rake % 100:02d}," in income.split("</svg>")[0]


async def test_a_group_the_user_does_not_administer_is_refused(console: Console) -> None:
    await console.sign_in(ADMIN.id)
    page = await console.text(f"/console/groups/{OTHER}", status=403)
    assert "Not your group" in page and "Other group" not in page
    # A round there is answered as one that does not exist (its number tells nothing).
    other_round = await console.text(f"/console/rounds/{console.history.other_round}", status=404)
    missing = await console.text("/console/rounds/999999", status=404)
    assert "No such round in your groups" in other_round and "No such round" in missing
    await console.text(f"/console/rounds?group={OTHER}", status=403)
    await console.text(f"/console/export/groups/{OTHER}/ledger.csv", status=403)


async def test_the_group_page_shows_settings_bank_and_audit(console: Console) -> None:
    await console.sign_in(ADMIN.id)
    page = await console.text(f"/console/groups/{GROUP}")
    assert 'id="set-rake" name="value" value="5%"' in page
    assert "Bank" in page and "Audit log" in page
    assert "credit" in page  # the admin's credits are in the audit log


async def test_a_setting_changed_in_the_console_is_saved_and_audited(console: Console) -> None:
    await console.sign_in(ADMIN.id)
    csrf = await console.csrf(f"/console/groups/{GROUP}")
    response = await console.client.post(
        f"/console/groups/{GROUP}/settings", data={"csrf": csrf, "key": "rake", "value": "4%"}
    )
    page = await response.text()
    assert response.status == 200 and "Saved rake." in page
    assert (await console.service.settings(GROUP)).rake_bps == 400
    audit = await console.service.audit_log(GROUP, 1)
    assert audit[0].actor_id == ADMIN.id and audit[0].action == "set"
    assert audit[0].details == {"setting": "rake", "old": "5%", "new": "4%"}
    assert "rake 5% → 4%" in page
    # The admin's name the bot stored is kept (the console knows only their id).
    names = await console.service.names([ADMIN.id])
    assert names[ADMIN.id] == Person(ADMIN.id, "Admin", "admin")


async def test_a_bad_value_is_refused_as_set_refuses_it(console: Console) -> None:
    await console.sign_in(ADMIN.id)
    csrf = await console.csrf(f"/console/groups/{GROUP}")
    response = await console.client.post(
        f"/console/groups/{GROUP}/settings",
        data={"csrf": csrf, "key": "max_bet", "value": "0.50"},
    )
    page = await response.text()
    assert 'id="error"' in page and "max_bet" in page
    assert (await console.service.settings(GROUP)).max_bet == 5_000
    assert all(line.action != "set" for line in await console.service.audit_log(GROUP, 50))
    assert response.status == 400 and 'value="0.50"' in page


async def test_the_group_page_says_nothing_an_address_puts_in_it(console: Console) -> None:
    await console.sign_in(ADMIN.id)
    page = await console.text(f"/console/groups/{GROUP}?error=Send+chips+to+X&saved=Hello")
    assert "Send chips" not in page and "Hello" not in page and 'id="error"' not in page
    assert 'id="saved"' in await console.text(f"/console/groups/{GROUP}?saved=rake")


async def test_a_player_outside_the_admins_groups_is_not_named(console: Console) -> None:
    stranger = Person(99, "Stranger", "stranger")
    await console.service.note_people([stranger])
    await console.sign_in(ADMIN.id)
    page = await console.text(f"/console/players/{stranger.id}", status=404)
    assert "Stranger" not in page and "No such player in your groups" in page
    await console.sign_in(OPERATOR)
    assert "Stranger" in await console.text(f"/console/players/{stranger.id}")


async def test_pictures_are_turned_off_in_the_console_as_set_does_it(console: Console) -> None:
    await console.sign_in(ADMIN.id)
    page = await console.text(f"/console/groups/{GROUP}")
    assert 'id="set-pictures" name="value" value="on"' in page
    csrf = await console.csrf(f"/console/groups/{GROUP}")
    for value, status, saved in (("maybe", 400, "on"), ("off", 200, "off")):
        response = await console.client.post(
            f"/console/groups/{GROUP}/settings",
            data={"csrf": csrf, "key": "pictures", "value": value},
        )
        assert response.status == status  # a refusal is the page itself, saved a redirect
        assert (await console.service.settings(GROUP)).pictures == saved
    assert "Saved pictures." in await response.text()


async def test_a_post_without_the_sessions_csrf_token_is_refused(console: Console) -> None:
    await console.sign_in(ADMIN.id)
    for data in ({"key": "rake", "value": "4%"}, {"csrf": "0" * 64, "key": "rake", "value": "4%"}):
        response = await console.client.post(f"/console/groups/{GROUP}/settings", data=data)
        assert response.status == 403
        assert "security token does not match" in await response.text()
    assert (await console.service.settings(GROUP)).rake_bps == 500


async def test_rounds_are_listed_filtered_and_paged(console: Console) -> None:
    await console.sign_in(ADMIN.id)
    history = console.history
    page = await console.text("/console/rounds")
    for round_id in (*history.settled, history.open_round):
        assert f'href="/console/rounds/{round_id}"' in page
    assert f'href="/console/rounds/{history.other_round}"' not in page
    by_player = await console.text(f"/console/rounds?player={EVE.id}&group={GROUP}")
    assert f'href="/console/rounds/{history.open_round}"' not in by_player  # Eve has no outcome
    assert all(f'href="/console/rounds/{r}"' in by_player for r in history.settled)
    older = await console.text(f"/console/rounds?before={history.settled[1]}")
    assert f'href="/console/rounds/{history.settled[0]}"' in older
    assert f'href="/console/rounds/{history.settled[1]}"' not in older
    none = await console.text("/console/rounds?game=bullbull")
    assert "No round matches." in none
    await console.text("/console/rounds?from=yesterday", status=400)


async def test_a_round_page_shows_hands_postings_and_its_verification(console: Console) -> None:
    await console.sign_in(ADMIN.id)
    round_id = console.history.settled[0]
    page = await console.text(f"/console/rounds/{round_id}")
    assert 'id="verification">Verified' in page
    state = await console.service.round(round_id)
    assert state is not None and state.seed.hex() in page  # revealed once it ended
    assert html.escape(EVE.first_name) in page and EVE.first_name not in page
    assert "Ledger postings" in page and "settle" in page


async def test_an_open_rounds_seed_is_never_shown(console: Console) -> None:
    await console.sign_in(OPERATOR)
    round_id = console.history.open_round
    page = await console.text(f"/console/rounds/{round_id}")
    state = await console.service.round(round_id)
    assert state is not None
    assert state.seed.hex() not in page
    assert "Not revealed yet" in page and state.commitment in page


async def test_a_player_page_shows_chips_and_statement(console: Console) -> None:
    await console.sign_in(ADMIN.id)
    player = PLAYERS[0]
    page = await console.text(f"/console/players/{player.id}")
    balance = await console.service.balance(GROUP, player.id)
    total = balance.available + balance.held
    assert f"{total // 100}.{total % 100:02d}" in page
    assert "Other group" not in page  # chips there are not the admin's to see
    lines = await console.service.statement(GROUP, player.id, 50)
    assert len(lines) >= 2
    assert f'href="/console/rounds/{lines[0].round_id}"' in page
    await console.text(f"/console/players/{player.id}?group={OTHER}", status=403)


async def test_the_dealer_name_and_titles_are_escaped_everywhere(console: Console) -> None:
    await console.sign_in(OPERATOR)
    for path in ("/console/", f"/console/groups/{GROUP}", "/console/rounds"):
        assert "<Table>" not in await console.text(path)
    assert DEALER.first_name in await console.text("/console/rounds")


async def test_a_players_rounds_page_on_by_their_outcomes(console: Console) -> None:
    await console.sign_in(ADMIN.id)
    first, second = console.history.settled
    page = await console.text(f"/console/rounds?player={EVE.id}&before={second}")
    assert f'href="/console/rounds/{first}"' in page
    assert f'href="/console/rounds/{second}"' not in page
    by_name = await console.text("/console/rounds?player=@eve")
    assert all(f'href="/console/rounds/{r}"' in by_name for r in console.history.settled)
    assert "No round matches." in await console.text("/console/rounds?player=@nobody")


async def test_a_statement_pages_back_from_a_transaction(console: Console) -> None:
    player = PLAYERS[0]
    whole = await console.service.statement(GROUP, player.id, 50)
    async with console.service.store.reading() as uow:
        older = await uow.queries.statement(GROUP, player.id, 50, before=whole[0].transaction_id)
    assert older == whole[1:]


async def test_a_missing_round_or_a_malformed_filter_is_a_page_saying_so(console: Console) -> None:
    await console.sign_in(OPERATOR)
    assert "No such round in your groups." in await console.text(
        "/console/rounds/999999", status=404
    )
    page = await console.text("/console/rounds?from=yesterday", status=400)
    assert "from must be a date like 2026-12-01" in page and "<html" in page


async def test_the_audit_log_pages_back(console: Console) -> None:
    for amount in range(1, 61):  # 60 more credits: the log is longer than a page
        await console.service.credit(GROUP, ADMIN, PLAYERS[0].id, amount)
    await console.sign_in(ADMIN.id)
    page = await console.text(f"/console/groups/{GROUP}")
    assert page.count('<tr><td class="nowrap">') == 50
    older = page.split('href="?audit_before=')[1].split('"')[0]
    rest = await console.text(f"/console/groups/{GROUP}?audit_before={older}")
    everything = await console.service.audit_log(GROUP, 1000)
    assert rest.count('<tr><td class="nowrap">') == len(everything) - 50
    assert "0.01 to" in rest and "0.60 to" in page  # amounts as money, newest first
