// leadtrack's pages: progressive enhancement only. Every page works without this file; it
// adds keyboard shortcuts, selection and live updates where the page asks for them with
// data attributes.
(function () {
  "use strict";
  var d = document;

  function all(selector, root) {
    return Array.prototype.slice.call((root || d).querySelectorAll(selector));
  }

  // A key typed into a field is the field's, not a shortcut. A radio button or a checkbox
  // takes no text, so keys pressed on one (after picking a rating with 2) stay shortcuts.
  function typing(event) {
    var t = event.target;
    if (!t) return false;
    if (t.tagName === "INPUT") return !/^(radio|checkbox|button|submit|reset)$/.test(t.type);
    return t.isContentEditable || /^(TEXTAREA|SELECT)$/.test(t.tagName);
  }

  // ---- the inbox: j / k move between rows, Enter opens, x selects, / searches ----
  var rows = all("[data-row]");
  var current = -1;
  function moveTo(index) {
    if (!rows.length) return;
    current = Math.max(0, Math.min(rows.length - 1, index));
    rows.forEach(function (row, i) { row.classList.toggle("current", i === current); });
    var link = rows[current].querySelector("a[data-open]");
    if (link) link.focus();
  }

  // ---- selection for rating several leads at once ----
  var selectAll = d.querySelector("[data-select-all]");
  var boxes = all("input[data-select]");
  var counter = d.querySelector("[data-selected-count]");
  function countSelected() {
    var n = boxes.filter(function (b) { return b.checked; }).length;
    if (counter) counter.textContent = n === 1 ? "1 lead selected" : n + " leads selected";
    if (selectAll) {
      selectAll.checked = n > 0 && n === boxes.length;
      selectAll.indeterminate = n > 0 && n < boxes.length;
    }
  }
  if (selectAll) {
    selectAll.addEventListener("change", function () {
      boxes.forEach(function (b) { b.checked = selectAll.checked; });
      countSelected();
    });
  }
  boxes.forEach(function (b) { b.addEventListener("change", countSelected); });
  if (boxes.length) countSelected();

  d.addEventListener("keydown", function (event) {
    if (event.ctrlKey || event.metaKey || event.altKey) return;
    if (event.key === "/" && !typing(event)) {
      var search = d.querySelector("[data-search]");
      if (search) {
        event.preventDefault();
        search.focus();
        search.select();
      }
      return;
    }
    if (typing(event)) return;
    if (rows.length) {
      if (event.key === "j") { event.preventDefault(); moveTo(current + 1); }
      else if (event.key === "k") { event.preventDefault(); moveTo(current - 1); }
      else if (event.key === "x" && current >= 0) {
        var box = rows[current].querySelector("input[data-select]");
        if (box) {
          box.checked = !box.checked;
          countSelected();
        }
      }
    }
    // ---- a rating waiting out its undo window: u takes it back (in the inbox, the
    // current row's, else the first one shown) ----
    if (event.key === "u") {
      var row = current >= 0 ? rows[current] : null;
      var undo = (row && row.querySelector("[data-undo]")) ||
        d.querySelector("form[data-undo-form]:not([hidden]), [data-undo]:not([hidden])");
      if (undo) {
        event.preventDefault();
        if (undo.tagName === "FORM") undo.requestSubmit ? undo.requestSubmit() : undo.submit();
        else undo.click();
        return;
      }
    }
    // ---- s: marks the lead (in the inbox, the current row's) as spam, or takes a spam
    // lead out ----
    if (event.key === "s") {
      var spam = d.querySelector("[data-spam-button]");
      var pick = rows.length && current >= 0 ? rows[current].querySelector("input[data-select]") : null;
      if (spam && (!rows.length || pick)) {
        event.preventDefault();
        if (pick) {
          boxes.forEach(function (b) { b.checked = false; });
          pick.checked = true;
        }
        spam.click();
        return;
      }
    }
    // ---- a lead's rating form: 1-9 pick a label, 0 Lost, o Open, p the price,
    // Enter saves, n saves and opens the next open lead ----
    var form = d.querySelector("[data-rate-form]");
    if (form) {
      var choice = form.querySelector('input[data-key="' + event.key + '"]');
      if (choice) {
        event.preventDefault();
        choice.checked = true;
        choice.focus();
      } else if (event.key === "p") {
        var price = form.querySelector("[name=price]");
        if (price) {
          event.preventDefault();
          price.focus();
          price.select();
        }
      } else if ((event.key === "Enter" && form.contains(event.target)) || event.key === "n") {
        event.preventDefault();
        if (event.key === "n") form.querySelector("[data-next]").value = "1";
        form.requestSubmit ? form.requestSubmit() : form.submit();
      }
    }
  });

  // One submission per rating form: a second Enter or click while the first is on its way
  // does nothing (the server refuses a replay of the form's token too).
  all("form[data-rate-form], form#bulk, form[data-undo-form]").forEach(function (f) {
    f.addEventListener("submit", function (event) {
      if (f.getAttribute("data-sent")) event.preventDefault();
      else f.setAttribute("data-sent", "1");
    });
  });

  // ---- the undo window: a live countdown; when it ends, the Undo goes ----
  all("[data-held]").forEach(function (held) {
    var ends = Date.now() + Number(held.getAttribute("data-held"));
    var countdown = held.querySelector("[data-countdown]");
    var form = held.querySelector("[data-undo-form], [data-undo]");
    var tick = function () {
      var left = Math.ceil((ends - Date.now()) / 1000);
      if (left > 0) {
        countdown.textContent = left + " s";
        return;
      }
      clearInterval(timer);
      held.querySelector("[data-held-text]").textContent = held.classList.contains("held-row")
        ? "sending"
        : "The undo window has passed: the rating is on its way.";
      if (form) form.hidden = true;
    };
    var timer = setInterval(tick, 250);
    tick();
  });

  // ---- live: "N new leads" without a reload, at most 5 seconds late ----
  var live = d.querySelector("[data-live]");
  if (live && window.fetch) {
    var url = live.getAttribute("data-live");
    var poll = function () {
      fetch(url, { credentials: "same-origin", headers: { Accept: "application/json" } })
        .then(function (r) { return r.ok ? r.json() : null; })
        .then(function (answer) {
          if (!answer || !answer.count) return;
          var text = live.querySelector("[data-live-text]");
          text.textContent = answer.count === 1 ? "1 new lead" : answer.count + " new leads";
          live.hidden = false;
        })
        .catch(function () { /* offline for a moment: try again at the next tick */ });
    };
    setInterval(poll, 5000);
  }
})();
