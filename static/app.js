// Keyboard shortcuts and image zoom. Everything here has a mouse equivalent:
// any element with data-key="X" is clicked when X is pressed.
//
// Answer keys wait until the page's images have loaded and been drawn: a key
// held down (its repeats), or a second press while the answer is on its way,
// must never answer a task the worker has not seen. A fast expert is not
// held back: the next page takes keys as soon as it is drawn. Crowd pages
// name a longer guard (data-key-guard, ms): a double tap on a phone's
// keyboard is not a judgement.
(function () {
  var armed = false;

  function arm() {
    var images = Array.prototype.slice.call(document.images);
    var left = images.filter(function (i) { return !i.complete; }).length;
    var started = Date.now();
    var guard = document.querySelector("[data-key-guard]");
    var min = guard ? parseInt(guard.getAttribute("data-key-guard"), 10) || 0 : 0;
    function ready() {
      // After the next frame: the images are on the screen, not just loaded.
      requestAnimationFrame(function () {
        setTimeout(function () {
          armed = true;
          document.body.setAttribute("data-ready", "1");
        }, Math.max(0, min - (Date.now() - started)));
      });
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

  // The zoom is a named dialog: it takes focus (its close button), closes on
  // a tap, Escape, Enter or Space, and gives focus back to what opened it.
  function zoom(src, alt) {
    var o = document.createElement("div");
    o.className = "zoom-overlay";
    o.setAttribute("role", "dialog");
    o.setAttribute("aria-modal", "true");
    o.setAttribute("aria-label", "Zoomed image" + (alt ? ": " + alt : ""));
    var close = document.createElement("button");
    close.type = "button";
    close.className = "zoom-close";
    close.setAttribute("aria-label", "Close the zoomed image");
    close.textContent = "\u00d7";
    var big = document.createElement("img");
    big.src = src; big.alt = alt || "";
    o.appendChild(close);
    o.appendChild(big);
    o.addEventListener("click", function () { unzoom(); });
    document.body.appendChild(o);
    close.focus();
  }

  function unzoom() {
    var o = document.querySelector(".zoom-overlay");
    if (!o) return;
    o.remove();
    var opener = document.querySelector("[data-zoom-opener]");
    if (opener) { opener.removeAttribute("data-zoom-opener"); opener.focus(); }
  }

  // Images that zoom can be reached and opened with the keyboard too.
  function zoomables() {
    Array.prototype.forEach.call(document.querySelectorAll("img.zoomable"), function (img) {
      if (img.hasAttribute("tabindex")) return;
      img.setAttribute("tabindex", "0");
      img.setAttribute("role", "button");
      img.setAttribute("aria-label", "Zoom " + (img.alt || "the image"));
    });
  }
  if (document.readyState === "loading") {
    document.addEventListener("DOMContentLoaded", zoomables);
  } else {
    zoomables();
  }

  document.addEventListener("keydown", function (e) {
    if (e.ctrlKey || e.metaKey || e.altKey) return;
    var t = e.target;
    if (t && (t.tagName === "INPUT" && t.type !== "radio" && t.type !== "checkbox" || t.tagName === "TEXTAREA" || t.tagName === "SELECT")) return;
    var overlay = document.querySelector(".zoom-overlay");
    if (overlay) {
      // While zoomed, keys only close the zoom: no answer is given blind.
      if (e.key === "Escape" || e.key === "Enter" || e.key === " ") unzoom();
      e.preventDefault();
      return;
    }
    // Enter or Space on a focused zoomable image (or zoom button) zooms it.
    if ((e.key === "Enter" || e.key === " ") && t && t.matches && t.matches("img.zoomable, [data-zoom]")) {
      e.preventDefault();
      t.setAttribute("data-zoom-opener", "1");
      if (t.matches("[data-zoom]")) zoom(t.getAttribute("data-zoom"), t.getAttribute("aria-label"));
      else zoom(t.src, t.alt);
      return;
    }
    // Letter keys work whatever the case (Caps Lock, Shift).
    var el = document.querySelector('[data-key="' + CSS.escape(e.key) + '"]') ||
      (e.key.length === 1 ? document.querySelector('[data-key="' + CSS.escape(e.key.toLowerCase()) + '"]') : null);
    if (!el) return;
    e.preventDefault();
    if (e.repeat || !armed) return;
    // An answer or a link leaves the page: keys wait for the next one.
    if (el.type === "submit" || el.tagName === "A") armed = false;
    el.click();
  });

  document.addEventListener("click", function (e) {
    if (e.target.closest && e.target.closest(".zoom-overlay")) return;
    var button = e.target.closest && e.target.closest("[data-zoom]");
    if (button) {
      e.preventDefault();
      button.setAttribute("data-zoom-opener", "1");
      zoom(button.getAttribute("data-zoom"), button.getAttribute("aria-label"));
      return;
    }
    var img = e.target.closest && e.target.closest("img.zoomable");
    if (img) { img.setAttribute("data-zoom-opener", "1"); zoom(img.src, img.alt); }
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

// Back and Forward show a page as it was, even one the answers since have
// made wrong (a submitted questionnaire offering changes): a questionnaire's
// page names its own address, and is fetched anew when it is returned to.
window.addEventListener("pageshow", function (e) {
  var here = document.querySelector("[data-current]");
  if (!here) return;
  var nav = performance.getEntriesByType ? performance.getEntriesByType("navigation")[0] : null;
  if (e.persisted || (nav && nav.type === "back_forward")) {
    location.replace(here.getAttribute("data-current"));
  }
});

// A refused form comes back as the whole page with the reason beside the
// form: open the page there, not at its top (a long admin page would leave
// the reason below the fold).
(function () {
  function toRefusal() {
    if (location.hash) return;
    var alert = document.querySelector("section.card[id] [role=alert]");
    if (alert) alert.scrollIntoView({ block: "center" });
  }
  if (document.readyState === "loading") {
    document.addEventListener("DOMContentLoaded", toRefusal);
  } else {
    toRefusal();
  }
})();
