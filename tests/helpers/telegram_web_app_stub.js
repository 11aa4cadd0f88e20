// A stand-in for https://telegram.org/js/telegram-web-app.js in the Mini App's browser
// tests (docs/miniapp.md): nothing is fetched from the internet in a test. It defines
// the little of window.Telegram.WebApp the page uses: initData (put in place of
// __INIT_DATA__ by the test, as a JSON string), a theme like the Telegram client's light
// one, the calls the page makes, recorded in window.__telegramCalls, and its back button,
// pressed by window.__pressBack().
(function () {
  "use strict";
  var calls = [];
  var backHandlers = [];
  window.__telegramCalls = calls;
  window.__pressBack = function () { backHandlers.forEach(function (handler) { handler(); }); };
  window.Telegram = {
    WebApp: {
      initData: __INIT_DATA__,
      initDataUnsafe: {},
      platform: "test",
      colorScheme: "light",
      themeParams: {
        bg_color: "#ffffff",
        text_color: "#000000",
        hint_color: "#707579",
        link_color: "#2481cc",
        button_color: "#2481cc",
        button_text_color: "#ffffff",
        secondary_bg_color: "#efeff4",
        section_bg_color: "#ffffff",
        destructive_text_color: "#e53935",
      },
      ready: function () { calls.push("ready"); },
      expand: function () { calls.push("expand"); },
      onEvent: function (name) { calls.push("onEvent:" + name); },
      close: function () { calls.push("close"); },
      // The back button: the test presses it with window.__pressBack().
      BackButton: {
        isVisible: false,
        show: function () { this.isVisible = true; calls.push("BackButton.show"); },
        hide: function () { this.isVisible = false; calls.push("BackButton.hide"); },
        onClick: function (handler) { backHandlers.push(handler); calls.push("BackButton.onClick"); },
      },
      HapticFeedback: {
        notificationOccurred: function (kind) { calls.push("haptic:" + kind); },
      },
    },
  };
})();
