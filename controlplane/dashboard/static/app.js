// Refreshes the page's main section in place from the server (which
// renders it from the control plane's informer cache), so an open page
// follows the fleet. The request goes to the same address with the same
// credentials the browser (or the proxy in front) already sends; the
// script holds no token. Updates pause while the tab is hidden and while
// focus is inside the section, so keyboard and screen reader users keep
// their place.
(function () {
  "use strict";
  var live = document.getElementById("live");
  var status = document.getElementById("updated");
  if (!live) { return; }
  var every = parseInt(live.getAttribute("data-refresh"), 10) || 5000;
  var busy = false;
  function say(text) { if (status) { status.textContent = text; } }
  function refresh() {
    if (busy || document.hidden) { return; }
    var a = document.activeElement;
    if (a && a !== live && live.contains(a)) { return; }
    busy = true;
    fetch(window.location.href, { headers: { "X-Dashboard-Fragment": "main" }, credentials: "same-origin", cache: "no-store" })
      .then(function (r) {
        if (!r.ok) { throw new Error("status " + r.status); }
        return r.text();
      })
      .then(function (html) {
        live.innerHTML = html;
        say("updated " + new Date().toLocaleTimeString());
      })
      .catch(function (e) { say("update failed: " + e.message); })
      .then(function () { busy = false; });
  }
  window.setInterval(refresh, every);
})();
