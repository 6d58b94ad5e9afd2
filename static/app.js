// Keyboard shortcuts and image zoom. Everything here has a mouse equivalent:
// any element with data-key="X" is clicked when X is pressed.
(function () {
  document.addEventListener("keydown", function (e) {
    if (e.ctrlKey || e.metaKey || e.altKey) return;
    var t = e.target;
    if (t && (t.tagName === "INPUT" || t.tagName === "TEXTAREA" || t.tagName === "SELECT")) return;
    var overlay = document.querySelector(".zoom-overlay");
    if (overlay && e.key === "Escape") { overlay.remove(); return; }
    var el = document.querySelector('[data-key="' + CSS.escape(e.key) + '"]');
    if (el) { e.preventDefault(); el.click(); }
  });
  document.addEventListener("click", function (e) {
    var img = e.target.closest && e.target.closest("img.zoomable");
    if (img) {
      var o = document.createElement("div");
      o.className = "zoom-overlay";
      var big = document.createElement("img");
      big.src = img.src; big.alt = img.alt;
      o.appendChild(big);
      o.addEventListener("click", function () { o.remove(); });
      document.body.appendChild(o);
      return;
    }
  });
})();
