// Keyboard shortcuts and image zoom. Everything here has a mouse equivalent:
// any element with data-key="X" is clicked when X is pressed.
//
// Answer keys wait until the page's images have loaded and a short moment
// has passed: a key pressed twice in quick succession, or held down, must
// never answer a task the worker has not seen.
(function () {
  var MIN_MS = 400;
  var armed = false;

  function arm() {
    var started = Date.now();
    var images = Array.prototype.slice.call(document.images);
    var left = images.filter(function (i) { return !i.complete; }).length;
    function ready() {
      var wait = Math.max(0, MIN_MS - (Date.now() - started));
      setTimeout(function () {
        armed = true;
        document.body.setAttribute("data-ready", "1");
      }, wait);
    }
    if (left === 0) { ready(); return; }
    images.forEach(function (i) {
      if (i.complete) return;
      var once = function () { left -= 1; if (left === 0) ready(); };
      i.addEventListener("load", once, { once: true });
      i.addEventListener("error", once, { once: true });
    });
  }
  if (document.readyState === "loading") {
    document.addEventListener("DOMContentLoaded", arm);
  } else {
    arm();
  }

  function zoom(src, alt) {
    var o = document.createElement("div");
    o.className = "zoom-overlay";
    o.setAttribute("role", "dialog");
    var big = document.createElement("img");
    big.src = src; big.alt = alt || "";
    o.appendChild(big);
    o.addEventListener("click", function () { o.remove(); });
    document.body.appendChild(o);
  }

  document.addEventListener("keydown", function (e) {
    if (e.ctrlKey || e.metaKey || e.altKey) return;
    var t = e.target;
    if (t && (t.tagName === "INPUT" && t.type !== "radio" && t.type !== "checkbox" || t.tagName === "TEXTAREA" || t.tagName === "SELECT")) return;
    var overlay = document.querySelector(".zoom-overlay");
    if (overlay) {
      // While zoomed, keys only close the zoom: no answer is given blind.
      if (e.key === "Escape" || e.key === "Enter" || e.key === " ") overlay.remove();
      e.preventDefault();
      return;
    }
    var el = document.querySelector('[data-key="' + CSS.escape(e.key) + '"]');
    if (!el) return;
    e.preventDefault();
    if (e.repeat || !armed) return;
    el.click();
  });

  document.addEventListener("click", function (e) {
    var button = e.target.closest && e.target.closest("[data-zoom]");
    if (button) { e.preventDefault(); zoom(button.getAttribute("data-zoom"), button.getAttribute("aria-label")); return; }
    var img = e.target.closest && e.target.closest("img.zoomable");
    if (img) zoom(img.src, img.alt);
  });
})();

// Copy buttons: data-copy="ID" copies that element's text (a completion
// code), so nobody has to type it on a phone.
(function () {
  document.addEventListener("click", function (e) {
    var button = e.target.closest ? e.target.closest("[data-copy]") : null;
    if (!button) return;
    var source = document.getElementById(button.getAttribute("data-copy"));
    if (!source || !navigator.clipboard) return;
    navigator.clipboard.writeText(source.textContent.trim()).then(function () {
      button.textContent = "Copied";
    });
  });
})();
