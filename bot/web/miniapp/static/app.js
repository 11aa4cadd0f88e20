// The Mini App's page: signs in with Telegram's initData, shows the group's table as the
// live feed sends it (Server-Sent Events, docs/miniapp.md) and places bets. Plain JS, no
// build step; every text from the server goes in as text, never as HTML.
(function () {
  "use strict";

  // Without EventSource (old web views) the page asks for the table this often.
  var POLL_MS = 1000;
  // How soon a feed the server refused or closed is opened again.
  var RECONNECT_MS = 2000;
  var PHASES = {
    bidding: "Bidding for dealer",
    betting: "Betting is open",
    grabbing: "Grab!",
  };
  var GAMES = {
    envelope68: "Red envelopes",
    bullbull: "Niu Niu (Bull Bull)",
    poker29: "Poker 2.9",
    poker29_vn: "Poker 2.9 (VN)",
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

  var OFFLINE = "No connection: trying again…";

  var webApp = window.Telegram && window.Telegram.WebApp;
  var token = null;
  var chat = null;
  var table = null;
  // The server's clock less the phone's: the countdown is to the real deadline.
  var clockOffset = 0;
  var busy = false;
  // Where the shown table stands ("round.version"): a feed opened again says so
  // (since=), and gets the table at once only if it changed meanwhile.
  var version = "";
  var feed = null;

  function $(id) { return document.getElementById(id); }

  function say(text, kind) {
    var message = $("message");
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
      $("phase").textContent = "Open this table from Telegram.";
      return Promise.resolve(false);
    }
    return call("POST", "api/session", { initData: webApp.initData }).then(function (answer) {
      if (answer.status !== 200) {
        $("phase").textContent = "Not signed in";
        say(answer.data.error || "Signing in failed.", "error");
        return false;
      }
      token = answer.data.token;
      var asked = new URLSearchParams(location.search).get("chat");
      chat = answer.data.chat !== null ? String(answer.data.chat) : asked;
      if (!chat) {
        $("phase").textContent = "Open this table from your group's board.";
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
      mark.title = "standing bet (/autobet)";
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

  function renderQuickBets(quick) {
    var box = $("quick-bets");
    var wanted = quick.map(function (money) { return money.cents; }).join(",");
    if (box.dataset.amounts === wanted) return;
    box.dataset.amounts = wanted;
    box.textContent = "";
    quick.forEach(function (money) {
      var button = document.createElement("button");
      button.type = "button";
      button.className = "quick-bet";
      button.textContent = money.text;
      button.addEventListener("click", function () { bet(typed(money.cents)); });
      box.appendChild(button);
    });
  }

  function render() {
    var round = table.round;
    var betting = round !== null && round.phase === "betting";
    $("phase").textContent = round ? PHASES[round.phase] || round.phase : "No round running";
    $("game").textContent = round ? GAMES[round.game] || round.game : "Waiting for the next round";
    $("dealer").textContent = round && round.dealer ? round.dealer.name : "–";
    $("pool").textContent = round && round.dealer ? round.pool.text : "–";
    var high = round && round.phase === "bidding" ? round.high_bid : null;
    $("high-bid-row").hidden = !high;
    $("high-bid").textContent = high ? high.name + " · " + high.text : "–";

    var bets = $("bets");
    bets.textContent = "";
    var mine = null;
    (round ? round.bets : []).forEach(function (entry) {
      var item = row(entry.name + (entry.mine ? " (you)" : ""), entry.text, entry.standing ? "🔁" : "");
      if (entry.mine) { item.className = "mine"; mine = entry; }
      bets.appendChild(item);
    });
    var count = round ? round.bets.length : 0;
    $("bet-count").textContent = count ? "(" + count + ")" : "";
    $("no-bets").hidden = count > 0;
    var grabbed = round ? round.grabbed : [];
    $("grabbed").hidden = !round || round.phase !== "grabbing";
    $("grabbed").textContent = grabbed.length ? "Grabbed: " + grabbed.join(", ") : "Nobody has grabbed yet.";

    $("chips-free").textContent = table.chips.available.text;
    $("chips-held").textContent = table.chips.held.text;

    renderQuickBets(table.quick_bets);
    Array.prototype.forEach.call(document.querySelectorAll(".quick-bet, #bet"), function (button) {
      button.disabled = !betting || busy;
    });
    $("cancel").hidden = !(betting && mine);
    $("cancel").disabled = busy;
    tick();
  }

  function tick() {
    var clock = $("countdown");
    var round = table && table.round;
    if (!round) { clock.textContent = ""; return; }
    var left = Math.max(0, round.deadline_ms - (Date.now() + clockOffset));
    var seconds = Math.ceil(left / 1000);
    clock.textContent = seconds + "s";
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
    version = shown.version || version;
    document.body.dataset.version = version;
    clockOffset = shown.now_ms - Date.now();
    render();
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
      if ($("message").textContent === OFFLINE) say("");
    };
    feed.onerror = function () {
      document.body.dataset.live = "no";
      say(OFFLINE, "error");
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
        $("phase").textContent = answer.status === 403 ? "Not your group" : "Not shown";
        say(answer.data.error || "The table could not be read.", "error");
        return false;
      }
      return true;
    }).catch(function () {
      say(OFFLINE, "error");
      return true;
    });
  }

  function bet(amount) {
    if (busy) return;
    busy = true;
    if (table) render();
    say("Placing your bet…");
    call("POST", "api/bet", { chat: chat, amount: amount }).then(function (answer) {
      if (answer.status === 200) {
        say(answer.data.text, "ok");
        show(answer.data.table);
        if (webApp && webApp.HapticFeedback) webApp.HapticFeedback.notificationOccurred("success");
      } else {
        say(answer.data.error || "The bet was not placed.", "error");
        if (webApp && webApp.HapticFeedback) webApp.HapticFeedback.notificationOccurred("error");
      }
    }).catch(function () {
      say("No connection: the bet was not sent.", "error");
    }).then(function () {
      busy = false;
      if (table) render();
    });
  }

  function start() {
    applyTheme();
    if (webApp) {
      webApp.ready();
      webApp.expand();
      if (webApp.onEvent) webApp.onEvent("themeChanged", applyTheme);
    }
    $("custom").addEventListener("submit", function (event) {
      event.preventDefault();
      bet($("amount").value.trim());
    });
    $("cancel").addEventListener("click", function () { bet("0"); });
    signIn().then(function (ok) {
      if (!ok) return;
      setInterval(function () { if (table) tick(); }, 250);
      if (window.EventSource) {
        listen();
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
