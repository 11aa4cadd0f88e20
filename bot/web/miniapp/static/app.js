// The Mini App's page: signs in with Telegram's initData, shows the group's table as the
// live feed sends it (Server-Sent Events, docs/miniapp.md) and plays the player's moves
// (bid, bet, grab, standing bet, same again) by phase. Plain JS, no build step; every
// text from the server goes in as text, never as HTML. Every word it shows is a message
// of the bot's catalogues, sent for the user's language (api/texts): t(key) here,
// data-t attributes in index.html (bot/web/miniapp/page_texts.py finds the keys).
(function () {
  "use strict";

  // Without EventSource (old web views) the page asks for the table this often.
  var POLL_MS = 1000;
  // How soon a feed the server refused or closed is opened again.
  var RECONNECT_MS = 2000;
  var PHASES = {
    bidding: "miniapp.phase.bidding",
    betting: "miniapp.phase.betting",
    grabbing: "miniapp.phase.grabbing",
  };
  // The games as the bot names them.
  var GAMES = {
    envelope68: "game.envelope68",
    bullbull: "game.bullbull",
    poker29: "game.poker29",
    poker29_vn: "game.poker29_vn",
  };
  // A refusal's "reason" (bot/web/miniapp/app.py), said in the page's words.
  var REFUSALS = {
    malformed: "miniapp.refused.malformed",
    signature: "miniapp.refused.signature",
    expired: "miniapp.refused.expired",
    signed_out: "miniapp.refused.signed_out",
    session_ended: "miniapp.refused.session_ended",
    not_member: "miniapp.refused.not_member",
    no_group: "miniapp.refused.no_group",
  };
  // Copied from Telegram's theme into the page's CSS variables (miniapp.css).
  var THEME = {
    bg_color: "--tg-bg",
    text_color: "--tg-text",
    hint_color: "--tg-hint",
    link_color: "--tg-link",
    button_color: "--tg-button",
    button_text_color: "--tg-button-text",
    secondary_bg_color: "--tg-secondary-bg",
    section_bg_color: "--tg-section-bg",
    destructive_text_color: "--tg-destructive",
  };

  var OFFLINE = "miniapp.offline";

  var webApp = window.Telegram && window.Telegram.WebApp;
  // The page's texts in the user's language, by key (api/texts).
  var texts = {};
  var token = null;
  var chat = null;
  var table = null;
  // The player's standing bet, as the last table that said it had it (the feed's
  // tables do not: it is no round's state).
  var standing = null;
  // The server's clock less the phone's: the countdown is to the real deadline.
  var clockOffset = 0;
  var busy = false;
  // The phase the play card shows ("none" between rounds).
  var shownPhase = null;
  // Where the shown table stands ("round.version"): a feed opened again says so
  // (since=), and gets the table at once only if it changed meanwhile.
  var version = "";
  var feed = null;

  function $(id) { return document.getElementById(id); }

  // The text of message ``key``, its {placeholders} filled from ``params``.
  function t(key, params) {
    var text = key in texts ? texts[key] : key;
    return text.replace(/\{(\w+)\}/g, function (whole, name) {
      return params && name in params ? String(params[name]) : whole;
    });
  }

  // What a refusal says: its reason in the page's words, else the bot's own answer (a
  // move refused: the bot's catalogues'), else ``fallback``.
  function refused(answer, fallback) {
    var reason = REFUSALS[answer.data.reason];
    if (reason) return t(reason);
    if (answer.status === 409 && answer.data.error) return answer.data.error;
    return t(fallback);
  }

  // The language the user's app is in, as Telegram's signed initData says.
  function languageCode() {
    try {
      var user = JSON.parse(new URLSearchParams(webApp.initData).get("user"));
      if (user && user.language_code) return user.language_code;
    } catch (error) { /* no initData, or no user in it */ }
    return navigator.language || "";
  }

  // The elements of index.html that name a message: their text and attributes.
  function translatePage() {
    var attributes = { t: null, tPlaceholder: "placeholder", tLabel: "aria-label", tTitle: "title" };
    Object.keys(attributes).forEach(function (name) {
      var selector = "[data-" + name.replace(/[A-Z]/g, function (c) { return "-" + c.toLowerCase(); }) + "]";
      Array.prototype.forEach.call(document.querySelectorAll(selector), function (element) {
        var text = t(element.dataset[name]);
        if (attributes[name]) element.setAttribute(attributes[name], text);
        else element.textContent = text;
      });
    });
    document.title = t("miniapp.title");
  }

  function loadTexts() {
    var code = webApp && webApp.initData ? languageCode() : navigator.language || "";
    return call("GET", "api/texts?language_code=" + encodeURIComponent(code)).then(function (answer) {
      if (answer.status === 200) {
        texts = answer.data.texts;
        document.documentElement.lang = answer.data.language;
        document.body.dataset.language = answer.data.language;
      }
    }).catch(function () { /* offline: the page says so once it calls again */ }).then(translatePage);
  }

  // Say ``text`` in the page: under the play buttons, or where ``where`` names.
  function say(text, kind, where) {
    var message = $(where || "message");
    message.textContent = text || "";
    message.className = "message" + (kind ? " " + kind : "");
  }

  function applyTheme() {
    var params = (webApp && webApp.themeParams) || {};
    Object.keys(THEME).forEach(function (key) {
      if (params[key]) document.documentElement.style.setProperty(THEME[key], params[key]);
    });
  }

  // Cents as the amount a player types: 1250 is "12.50".
  function typed(cents) {
    var rest = String(cents % 100);
    return Math.floor(cents / 100) + "." + (rest.length < 2 ? "0" + rest : rest);
  }

  function call(method, path, body) {
    var headers = { "Content-Type": "application/json" };
    if (token) headers.Authorization = "Bearer " + token;
    return fetch(path, {
      method: method,
      headers: headers,
      body: body === undefined ? undefined : JSON.stringify(body),
      cache: "no-store",
    }).then(function (response) {
      return response.json().catch(function () { return {}; }).then(function (data) {
        return { status: response.status, data: data };
      });
    });
  }

  function signIn() {
    if (!webApp || !webApp.initData) {
      $("phase").textContent = t("miniapp.open_from_telegram");
      return Promise.resolve(false);
    }
    return call("POST", "api/session", { initData: webApp.initData }).then(function (answer) {
      if (answer.status !== 200) {
        $("phase").textContent = t("miniapp.not_signed_in");
        say(refused(answer, "miniapp.sign_in_failed"), "error");
        return false;
      }
      token = answer.data.token;
      var asked = new URLSearchParams(location.search).get("chat");
      chat = answer.data.chat !== null ? String(answer.data.chat) : asked;
      if (!chat) {
        $("phase").textContent = t("miniapp.open_from_board");
        return false;
      }
      return true;
    });
  }

  function row(label, value, extra) {
    var item = document.createElement("li");
    var name = document.createElement("span");
    name.className = "name";
    name.textContent = label;
    if (extra) {
      var mark = document.createElement("span");
      mark.className = "standing";
      mark.title = t("miniapp.standing.mark");
      mark.textContent = extra;
      name.appendChild(mark);
    }
    var amount = document.createElement("span");
    amount.className = "amount";
    amount.textContent = value;
    item.appendChild(name);
    item.appendChild(amount);
    return item;
  }

  // A row of amount buttons (class ``kind``), redrawn only when the amounts change.
  function renderAmounts(box, kind, amounts, press) {
    var wanted = amounts.map(function (money) { return money.cents; }).join(",");
    if (box.dataset.amounts === wanted) return;
    box.dataset.amounts = wanted;
    box.textContent = "";
    amounts.forEach(function (money) {
      var button = document.createElement("button");
      button.type = "button";
      button.className = kind;
      button.textContent = money.text;
      button.addEventListener("click", function () { press(typed(money.cents)); });
      box.appendChild(button);
    });
  }

  // What the play card offers in each phase: its title, and which controls show.
  var PLAY = {
    bidding: {
      title: "miniapp.play.bid_title",
      submit: "miniapp.play.bid",
      field: "miniapp.play.bid_field",
    },
    betting: {
      title: "miniapp.play.bet_title",
      submit: "miniapp.play.bet",
      field: "miniapp.play.bet_field",
    },
    grabbing: { title: "miniapp.play.grab_title" },
    none: { title: "miniapp.play.none_title" },
  };

  function renderPlay(round, mine) {
    var phase = round ? round.phase : "none";
    // An answer belongs to the phase it was given in: a new phase clears it.
    if (shownPhase !== null && phase !== shownPhase && !busy && $("message").className !== "message error") {
      say("");
    }
    shownPhase = phase;
    var play = PLAY[phase] || PLAY.none;
    var bidding = phase === "bidding", betting = phase === "betting";
    $("play-title").textContent = t(play.title);
    $("quick-bids").hidden = !bidding;
    $("quick-bets").hidden = !betting;
    $("custom").hidden = !(bidding || betting);
    if (play.submit) {
      $("bet").textContent = t(play.submit);
      $("amount").placeholder = t(play.field);
      $("amount").setAttribute("aria-label", t(play.field));
    }
    renderAmounts($("quick-bids"), "quick-bid", bidding ? round.bid_steps : [], bid);
    renderAmounts($("quick-bets"), "quick-bet", table.quick_bets, bet);
    Array.prototype.forEach.call(
      document.querySelectorAll(".quick-bet, .quick-bid, #bet"),
      function (button) { button.disabled = busy; }
    );
    $("cancel").hidden = !(betting && mine);
    $("cancel").disabled = busy;

    var me = round && round.me;
    var grabbing = phase === "grabbing" && me && me.plays;
    $("grab").hidden = !grabbing;
    $("grab").disabled = busy || !grabbing || me.grabbed;
    $("grab").textContent = t(grabbing && me.grabbed ? "miniapp.play.grabbed" : "miniapp.play.grab");
    $("again").hidden = !(phase === "none" && table.last_round);
    $("again").disabled = busy;

    var hint = "";
    if (phase === "grabbing" && !(me && me.plays)) hint = t("miniapp.play.not_playing");
    else if (phase === "none") hint = t("miniapp.play.between");
    $("play-hint").textContent = hint;
    $("play-hint").hidden = !hint;
  }

  function renderStanding() {
    $("standing").textContent = standing
      ? t(standing.once ? "miniapp.standing.once" : "miniapp.standing.amount", { amount: standing.text })
      : t("miniapp.standing.none");
    $("standing-stop").hidden = !standing;
    $("standing-set").disabled = busy;
    $("standing-stop").disabled = busy;
  }

  function render() {
    var round = table.round;
    $("phase").textContent = round ? t(PHASES[round.phase] || round.phase) : t("miniapp.no_round");
    $("game").textContent = round ? t(GAMES[round.game] || round.game) : t("miniapp.waiting");
    var dealer = round && round.dealer;
    $("dealer").textContent = dealer ? (dealer.house ? t("miniapp.house") : dealer.name) : "–";
    $("pool").textContent = round && round.dealer ? round.pool.text : "–";
    var high = round && round.phase === "bidding" ? round.high_bid : null;
    $("high-bid-row").hidden = !high;
    $("high-bid").textContent = high ? high.name + " · " + high.text : "–";

    var bets = $("bets");
    bets.textContent = "";
    var mine = null;
    (round ? round.bets : []).forEach(function (entry) {
      var name = entry.mine ? t("miniapp.bets.you", { name: entry.name }) : entry.name;
      var item = row(name, entry.text, entry.standing ? "🔁" : "");
      if (entry.mine) { item.className = "mine"; mine = entry; }
      bets.appendChild(item);
    });
    var count = round ? round.bets.length : 0;
    $("bet-count").textContent = count ? "(" + count + ")" : "";
    $("no-bets").hidden = count > 0;
    var grabbed = round ? round.grabbed : [];
    $("grabbed").hidden = !round || round.phase !== "grabbing";
    $("grabbed").textContent = grabbed.length
      ? t("miniapp.grabbed", { names: grabbed.join(", ") })
      : t("miniapp.nobody_grabbed");

    $("chips-free").textContent = table.chips.available.text;
    $("chips-held").textContent = table.chips.held.text;

    renderPlay(round, mine);
    renderStanding();
    tick();
  }

  function tick() {
    var clock = $("countdown");
    var round = table && table.round;
    if (!round) { clock.textContent = ""; return; }
    var left = Math.max(0, round.deadline_ms - (Date.now() + clockOffset));
    var seconds = Math.ceil(left / 1000);
    clock.textContent = t("miniapp.seconds_left", { seconds: seconds });
    clock.className = "countdown" + (seconds <= 5 ? " urgent" : "");
  }

  // Whether version a ("round.version") is older than b.
  function older(a, b) {
    if (!a || !b) return false;
    var x = a.split("."), y = b.split(".");
    var round = Number(x[0]) - Number(y[0]);
    return round < 0 || (round === 0 && Number(x[1]) < Number(y[1]));
  }

  function show(shown) {
    if (older(shown.version, version)) return;  // an answer overtaken by the feed
    table = shown;
    if ("standing" in shown) standing = shown.standing;
    version = shown.version || version;
    document.body.dataset.version = version;
    clockOffset = shown.now_ms - Date.now();
    render();
    // The other views (static/past.js) follow the table: a round ended shows its results.
    document.dispatchEvent(new CustomEvent("miniapp:table", { detail: table }));
  }

  // The live feed. EventSource reconnects by itself after a drop, sending the last
  // event's id; a feed refused (or closed by the server) is opened again here, once the
  // table says whether the page may still see it.
  function listen() {
    var url = "api/feed?chat=" + encodeURIComponent(chat) + "&token=" + encodeURIComponent(token);
    if (version) url += "&since=" + encodeURIComponent(version);
    feed = new EventSource(url);
    feed.addEventListener("table", function (event) {
      show(JSON.parse(event.data));
      document.body.dataset.events = String(Number(document.body.dataset.events || 0) + 1);
    });
    feed.onopen = function () {
      document.body.dataset.live = "yes";
      if ($("message").textContent === t(OFFLINE)) say("");
    };
    feed.onerror = function () {
      document.body.dataset.live = "no";
      say(t(OFFLINE), "error");
      if (feed.readyState !== EventSource.CLOSED) return;  // it reconnects by itself
      feed.close();
      poll().then(function (again) { if (again) setTimeout(listen, RECONNECT_MS); });
    };
  }

  function poll() {
    return call("GET", "api/table?chat=" + encodeURIComponent(chat)).then(function (answer) {
      if (answer.status === 200) {
        show(answer.data);
      } else {
        $("phase").textContent = t(answer.status === 403 ? "miniapp.not_your_group" : "miniapp.not_shown");
        say(refused(answer, "miniapp.table_unread"), "error");
        return false;
      }
      return true;
    }).catch(function () {
      say(t(OFFLINE), "error");
      return true;
    });
  }

  // A move: POST it, say the bot's answer (or refusal) in the page, show the table after.
  // ``where``: the element the answer goes in (the play card's message by default).
  function move(path, body, pending, where) {
    if (busy) return;
    busy = true;
    if (table) render();
    say(t(pending), "", where);
    body.chat = chat;
    call("POST", "api/" + path, body).then(function (answer) {
      if (answer.status === 200) {
        show(answer.data.table);
        say(answer.data.text, "ok", where);
        if (webApp && webApp.HapticFeedback) webApp.HapticFeedback.notificationOccurred("success");
      } else {
        say(refused(answer, "miniapp.not_done"), "error", where);
        if (webApp && webApp.HapticFeedback) webApp.HapticFeedback.notificationOccurred("error");
      }
    }).catch(function () {
      say(t("miniapp.nothing_sent"), "error", where);
    }).then(function () {
      busy = false;
      if (table) render();
    });
  }

  // The round the page shows: a move for it is refused once the group is past it.
  function shownRound() { return table && table.round ? table.round.id : null; }

  function bet(amount) {
    move("bet", { amount: amount, round: shownRound() }, "miniapp.pending.bet");
  }

  function bid(amount) {
    move("bid", { amount: amount, round: shownRound() }, "miniapp.pending.bid");
  }

  function grab() { move("grab", { round: shownRound() }, "miniapp.pending.grab"); }

  function again() { move("again", { round: table.last_round }, "miniapp.pending.again"); }

  function setStanding(amount) {
    move("autobet", { amount: amount }, "miniapp.pending.standing", "standing-message");
  }

  function openStanding(open) {
    $("standing-panel").hidden = !open;
    $("standing-open").hidden = open;
    if (open) $("standing-amount").focus();
  }

  // Telegram's back button: it closes the standing bet's panel if open, else the app.
  function back() {
    // Another view open (static/past.js) goes back to the table first.
    if (!document.dispatchEvent(new CustomEvent("miniapp:back", { cancelable: true }))) return;
    if (!$("standing-panel").hidden) {
      openStanding(false);
      return;
    }
    if (webApp && webApp.close) webApp.close();
  }

  function start() {
    applyTheme();
    if (webApp) {
      webApp.ready();
      webApp.expand();
      if (webApp.onEvent) webApp.onEvent("themeChanged", applyTheme);
    }
    if (webApp && webApp.BackButton) {
      webApp.BackButton.onClick(back);
      webApp.BackButton.show();
    }
    $("custom").addEventListener("submit", function (event) {
      event.preventDefault();
      var amount = $("amount").value.trim();
      if (table && table.round && table.round.phase === "bidding") bid(amount);
      else bet(amount);
    });
    $("cancel").addEventListener("click", function () { bet("0"); });
    $("grab").addEventListener("click", grab);
    $("again").addEventListener("click", again);
    $("standing-open").addEventListener("click", function () { openStanding(true); });
    $("standing-form").addEventListener("submit", function (event) {
      event.preventDefault();
      setStanding($("standing-amount").value.trim());
    });
    $("standing-stop").addEventListener("click", function () { setStanding("off"); });
    loadTexts().then(signIn).then(function (ok) {
      if (!ok) return;
      document.dispatchEvent(new CustomEvent("miniapp:signed-in", {
        detail: { chat: chat, call: call, t: t },
      }));
      setInterval(function () { if (table) tick(); }, 250);
      if (window.EventSource) {
        listen();
        poll();  // the feed's tables leave out the player's standing bet: this has it
        return;
      }
      var loop = function () {
        poll().then(function (again) { if (again) setTimeout(loop, POLL_MS); });
      };
      loop();
    });
  }

  start();
})();
