// The Mini App's views besides the live table (docs/miniapp.md): a round's results as the
// group gets them (the picture, the dealer's cards turning over), your history and
// /stats, the table's rules and odds, and /verify of a past round. It follows the table
// that app.js shows (its "miniapp:table" events) and asks the bot through app.js's
// signed-in call. Plain JS; every text from the server goes in as text, never as HTML.
(function () {
  "use strict";

  // What the group's client does with the dealer's cards (bot/pictures/reveal.py): they
  // lie face down, then turn one by one.
  var FACE_DOWN_MS = 700;
  var TURN_MS = 450;
  var RED_SUITS = "♥♦";

  var call = null;
  var chat = null;
  var view = "table";
  // The round whose results the table's card shows (or is loading).
  var resultsShown = null;
  var rulesRead = false;
  var historyMore = null;
  // Round id -> the results as the server sent them (a round's results never change).
  var kept = {};

  function $(id) { return document.getElementById(id); }

  // The page's text of message ``key`` in the user's language (app.js's ``t``, given as
  // the page signs in), its {names} filled from ``params``.
  var word = null;

  function get(path, params) {
    var query = "chat=" + encodeURIComponent(chat);
    Object.keys(params || {}).forEach(function (name) {
      query += "&" + name + "=" + encodeURIComponent(params[name]);
    });
    return call("GET", "api/" + path + "?" + query);
  }

  function say(id, text, kind) {
    $(id).textContent = text || "";
    $(id).className = "message" + (kind ? " " + kind : "");
  }

  // Show one view: the table's own sections, or those marked data-view.
  function open(name) {
    view = name;
    Array.prototype.forEach.call(document.querySelectorAll("#tabs [data-tab]"), function (tab) {
      tab.setAttribute("aria-selected", String(tab.dataset.tab === name));
    });
    Array.prototype.forEach.call(document.querySelectorAll("#app > section"), function (part) {
      var own = part.dataset.view || "table";
      if (own !== name) part.hidden = true;
      else if (part.dataset.view) part.hidden = part.id === "history-round" && !part.dataset.round;
      else part.hidden = part.id === "results-card" && !resultsShown;
    });
    document.body.dataset.view = name;
    if (name === "history") readHistory(false);
    if (name === "rules") readRules();
    window.scrollTo(0, 0);
  }

  // One card of the dealer's: face down until turned ("up").
  function card(text) {
    var shown = document.createElement("span");
    shown.className = "pcard" + (RED_SUITS.indexOf(text.slice(-1)) >= 0 ? " red" : "");
    var face = document.createElement("span");
    face.className = "face";
    var rank = document.createElement("b");
    rank.textContent = text.slice(0, -1);
    var suit = document.createElement("i");
    suit.textContent = text.slice(-1);
    face.appendChild(rank);
    face.appendChild(suit);
    var back = document.createElement("span");
    back.className = "back";
    shown.appendChild(back);
    shown.appendChild(face);
    return shown;
  }

  // The dealer's cards on a green table, turning over one by one; then the picture.
  function dealerCards(reveal, box, done) {
    var table = document.createElement("div");
    table.className = "deal";
    var caption = document.createElement("p");
    caption.className = "caption";
    caption.textContent = reveal.caption;
    var hand = document.createElement("div");
    hand.className = "hand";
    var cards = [];
    [["bull", reveal.bull], ["rest", reveal.rest]].forEach(function (group) {
      if (!group[1].length) return;
      var part = document.createElement("span");
      part.className = group[0];
      group[1].forEach(function (text) {
        var shown = card(text);
        cards.push(shown);
        part.appendChild(shown);
      });
      hand.appendChild(part);
    });
    table.appendChild(caption);
    table.appendChild(hand);
    table.dataset.turned = "0";
    box.appendChild(table);
    var still = window.matchMedia && window.matchMedia("(prefers-reduced-motion: reduce)").matches;
    var turned = 0;
    function turn() {
      if (!table.isConnected) return;
      cards[turned].classList.add("up");
      turned += 1;
      table.dataset.turned = String(turned);
      // The last card's turn ends before the hand counts as shown.
      setTimeout(turned < cards.length ? turn : done, TURN_MS);
    }
    if (still) {
      cards.forEach(function (shown) { shown.classList.add("up"); });
      table.dataset.turned = String(cards.length);
      done();
    } else {
      setTimeout(turn, FACE_DOWN_MS);
    }
  }

  // A round's results in ``box``: the dealer's cards turning over, then the picture the
  // group got; the text alone when there is no picture (a void round).
  function showResults(results, box) {
    box.textContent = "";
    var picture = null;
    if (results.picture) {
      picture = document.createElement("img");
      picture.className = "results-picture";
      picture.alt = word("miniapp.results_picture", { round: results.round });
      picture.src = results.picture;
    }
    function done() {
      if (picture) picture.classList.add("shown");
      box.dataset.revealed = String(results.round);
    }
    if (results.reveal) dealerCards(results.reveal, box, done);
    if (picture) box.appendChild(picture);
    else {
      var text = document.createElement("p");
      text.className = "text";
      text.textContent = results.text;
      box.appendChild(text);
    }
    if (!results.reveal) done();
  }

  function readResults(round) {
    if (kept[round]) return Promise.resolve(kept[round]);
    return get("results", { round: round }).then(function (answer) {
      if (answer.status !== 200) throw new Error(answer.data.error || "");
      kept[round] = answer.data;
      return answer.data;
    });
  }

  // The table between rounds shows the results of the round just ended.
  function followTable(table) {
    var card = $("results-card");
    var ended = !table.round && table.last_round ? table.last_round : null;
    if (ended === resultsShown) return;
    resultsShown = ended;
    card.hidden = !ended || view !== "table";
    if (!ended) return;
    $("results-title").textContent = word("miniapp.results_title", { round: ended });
    $("results-shown").textContent = word("miniapp.results_loading");
    readResults(ended).then(function (results) {
      if (resultsShown === ended) showResults(results, $("results-shown"));
    }).catch(function (error) {
      if (resultsShown === ended) $("results-shown").textContent = error.message || word("miniapp.load_failed");
    });
  }

  function historyLine(entry) {
    var item = document.createElement("li");
    var button = document.createElement("button");
    button.type = "button";
    button.className = "history-round";
    var what = document.createElement("span");
    what.className = "what";
    var title = document.createElement("b");
    title.textContent = word("miniapp.history_round", { round: entry.round, game: entry.game });
    var detail = document.createElement("span");
    detail.className = "hint";
    var parts = [entry.role_text || word("miniapp.history_stake", { stake: entry.stake.text })];
    parts.push(entry.result_text + " · " + entry.multiplier + "×");
    if (entry.ended_at_ms) parts.push(new Date(entry.ended_at_ms).toLocaleString());
    detail.textContent = parts.join(" · ");
    what.appendChild(title);
    what.appendChild(detail);
    var net = document.createElement("span");
    net.className = "net " + (entry.net.cents > 0 ? "win" : entry.net.cents < 0 ? "lose" : "even");
    net.textContent = entry.net.text;
    button.appendChild(what);
    button.appendChild(net);
    button.addEventListener("click", function () { historyRound(entry.round); });
    item.appendChild(button);
    return item;
  }

  // Your /stats and your rounds, newest first; ``more``: the next page of older ones.
  function readHistory(more) {
    if (!more) {
      historyMore = null;
      say("history-message", word("miniapp.loading"));
      get("stats").then(function (answer) {
        $("stats-text").textContent = answer.status === 200 ? answer.data.text : answer.data.error;
      });
    }
    var params = more && historyMore ? { before: historyMore } : {};
    get("history", params).then(function (answer) {
      if (answer.status !== 200) {
        say("history-message", answer.data.error || word("miniapp.load_failed"), "error");
        return;
      }
      say("history-message", "");
      var list = $("history");
      if (!more) list.textContent = "";
      answer.data.rounds.forEach(function (entry) { list.appendChild(historyLine(entry)); });
      historyMore = answer.data.more;
      $("history-more").hidden = !historyMore;
      $("history-none").hidden = list.children.length > 0;
      document.body.dataset.history = String(list.children.length);
    }).catch(function () { say("history-message", word("miniapp.load_failed"), "error"); });
  }

  // A round of your history: its results, and a way to verify it.
  function historyRound(round) {
    var card = $("history-round");
    card.dataset.round = String(round);
    card.hidden = false;
    $("history-round-title").textContent = word("miniapp.results_title", { round: round });
    $("history-round-shown").textContent = word("miniapp.results_loading");
    readResults(round).then(function (results) {
      if (card.dataset.round === String(round)) showResults(results, $("history-round-shown"));
    }).catch(function (error) {
      $("history-round-shown").textContent = error.message || word("miniapp.load_failed");
    });
    card.scrollIntoView({ block: "start" });
  }

  function readRules() {
    if (rulesRead) return;
    $("rules-text").textContent = word("miniapp.loading");
    get("rules").then(function (answer) {
      if (answer.status !== 200) {
        $("rules-text").textContent = answer.data.error || word("miniapp.load_failed");
        return;
      }
      rulesRead = true;
      $("rules-text").textContent = answer.data.rules;
      $("odds-text").textContent = answer.data.odds;
    });
  }

  function verify(round) {
    var verdict = $("verify-verdict");
    verdict.hidden = true;
    $("verify-text").textContent = word("miniapp.loading");
    $("verify-button").disabled = true;
    get("verify", { round: round }).then(function (answer) {
      if (answer.status !== 200) {
        verdict.hidden = false;
        verdict.className = "verdict error";
        verdict.textContent = answer.data.error || word("miniapp.load_failed");
        $("verify-text").textContent = "";
        return;
      }
      var checked = answer.data;
      var key = checked.verified ? "miniapp.verify_ok"
        : checked.kind === "mismatch" ? "miniapp.verify_not" : "miniapp.verify_later";
      verdict.hidden = false;
      verdict.className = "verdict " + (checked.verified ? "ok" : "error");
      verdict.textContent = word(key, { round: checked.round });
      $("verify-text").textContent = checked.text;
    }).catch(function () {
      $("verify-text").textContent = word("miniapp.load_failed");
    }).then(function () {
      $("verify-button").disabled = false;
    });
  }

  function start(detail) {
    call = detail.call;
    chat = detail.chat;
    word = detail.t;
    $("tabs").hidden = false;
    Array.prototype.forEach.call(document.querySelectorAll("#tabs [data-tab]"), function (tab) {
      tab.addEventListener("click", function () {
        if (tab.dataset.tab !== view) open(tab.dataset.tab);
      });
    });
    $("history-more").addEventListener("click", function () { readHistory(true); });
    $("history-verify").addEventListener("click", function () {
      $("verify-round").value = $("history-round").dataset.round;
      open("verify");
      verify($("verify-round").value);
    });
    $("verify-form").addEventListener("submit", function (event) {
      event.preventDefault();
      verify($("verify-round").value.trim().replace(/^#/, ""));
    });
  }

  document.addEventListener("miniapp:signed-in", function (event) { start(event.detail); });
  document.addEventListener("miniapp:table", function (event) {
    var table = event.detail;
    if (!$("verify-round").value && table.last_round) $("verify-round").value = String(table.last_round);
    followTable(table);
  });
  // Telegram's back button: from another view, back to the table.
  document.addEventListener("miniapp:back", function (event) {
    if (view === "table") return;
    event.preventDefault();
    open("table");
  });
})();
