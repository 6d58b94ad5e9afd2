// Fashionpedia task page: digits 1-9 toggle the first nine attributes,
// arrows move between options, space toggles (the browser's own), Enter
// saves, Backspace goes back; typing in the filter box narrows the list.
// A reviewer's form starts from the answer under review; A accepts it as it
// is (app.js clicks the Accept button, data-key="a").
// Everything also works with the mouse alone.
(function () {
  var form = document.querySelector(".fp-options");
  if (!form) return;
  var filter = form.querySelector(".fp-filter");
  var boxes = function () {
    return Array.prototype.slice.call(form.querySelectorAll(".fp-list li:not([hidden]) input[type=checkbox]"));
  };
  filter.addEventListener("input", function () {
    var q = filter.value.trim().toLowerCase();
    form.querySelectorAll(".fp-list li").forEach(function (li) {
      li.hidden = q !== "" && li.getAttribute("data-name").toLowerCase().indexOf(q) < 0 &&
        (li.getAttribute("data-group") || "").toLowerCase().indexOf(q) < 0;
    });
  });
  filter.addEventListener("keydown", function (e) {
    if (e.key === "ArrowDown") { var b = boxes(); if (b.length) { b[0].focus(); e.preventDefault(); } }
    if (e.key === "Enter") { e.preventDefault(); var b2 = boxes(); if (b2.length === 1) b2[0].click(); }
  });
  document.addEventListener("keydown", function (e) {
    if (e.ctrlKey || e.metaKey || e.altKey) return;
    var t = e.target;
    var typing = t && (t.tagName === "TEXTAREA" || (t.tagName === "INPUT" && (t.type === "text" || t.type === "search")));
    if (typing) return;
    // The same guard as every task page (app.js): keys act only once the
    // mask is shown and a short moment has passed, so a double press never
    // saves a mask nobody has looked at.
    if (!document.body.hasAttribute("data-ready") && (/^[1-9]$/.test(e.key) || e.key === "Enter")) {
      e.preventDefault(); e.stopImmediatePropagation();
      return;
    }
    if (/^[1-9]$/.test(e.key)) {
      var box = form.querySelector('input[data-digit="' + e.key + '"]');
      if (box) { box.click(); e.preventDefault(); e.stopImmediatePropagation(); }
      return;
    }
    if (e.key === "ArrowDown" || e.key === "ArrowUp") {
      var list = boxes();
      var i = list.indexOf(document.activeElement);
      var next = e.key === "ArrowDown" ? Math.min(list.length - 1, i + 1) : Math.max(0, i - 1);
      if (list[next]) { list[next].focus(); e.preventDefault(); }
      return;
    }
    if (e.key === "Enter" && !e.repeat) {
      e.preventDefault(); e.stopImmediatePropagation();
      form.requestSubmit();
    }
  }, true);
  // "Not sure" excludes ticked attributes and "not on the list"; "not on
  // the list" needs the missing attribute named (the server refuses both).
  var notSure = form.querySelector('input[name="not_sure"]');
  var notOnList = form.querySelector('input[name="not_on_list"]');
  var missing = form.querySelector('input[name="missing"]');
  var attrs = function () { return Array.prototype.slice.call(form.querySelectorAll('input[name="attr"]')); };
  var sync = function () { missing.required = notOnList.checked; };
  form.addEventListener("change", function (e) {
    if (e.target === notSure && notSure.checked) {
      attrs().forEach(function (b) { b.checked = false; });
      notOnList.checked = false;
    } else if ((e.target.name === "attr" || e.target === notOnList) && e.target.checked) {
      notSure.checked = false;
    }
    sync();
  });
  missing.addEventListener("input", function () {
    if (missing.value.trim() !== "") { notOnList.checked = true; notSure.checked = false; }
    sync();
  });
  sync();
  var zoom = document.querySelector("[data-fp-zoom]");
  if (zoom) zoom.addEventListener("click", function () {
    document.querySelector(".fp-mask").classList.toggle("zoomed");
  });
})();
