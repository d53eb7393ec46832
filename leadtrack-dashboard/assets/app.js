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

  // ---- the inbox: j / k move between rows; a row's rating is saved where it is ----
  var rows = all("[data-row]");
  var current = -1;
  function select(index, focus) {
    if (!rows.length) return;
    current = Math.max(0, Math.min(rows.length - 1, index));
    rows.forEach(function (row, i) { row.classList.toggle("current", i === current); });
    var link = rows[current].querySelector("a[data-open]");
    if (focus && link) {
      link.focus();
      rows[current].scrollIntoView({ block: "nearest" });
    }
  }
  function moveTo(index) { select(index, true); }
  rows.forEach(function (row, i) {
    row.addEventListener("focusin", function () { if (current !== i) select(i, false); });
  });

  function control(row, name) { return row && row.querySelector("[data-" + name + "]"); }
  function rowForm(row) { return d.getElementById(row.id.replace("lead-", "row-")); }
  // A row whose rating or price differs from what is saved.
  function dirty(row) {
    var rating = control(row, "rating");
    var price = control(row, "price");
    return Boolean((rating && rating.value !== rating.getAttribute("data-initial")) ||
      (price && price.value !== price.getAttribute("data-initial")));
  }
  function showMarks(row) {
    var rating = control(row, "rating");
    if (!rating) return;
    all("[data-marks]", row).forEach(function (marks) {
      marks.hidden = marks.getAttribute("data-marks") !== rating.value;
    });
  }
  function changed(row) {
    showMarks(row);
    row.classList.toggle("dirty", dirty(row));
    row.classList.remove("saved");
  }
  rows.forEach(function (row) {
    ["rating", "price"].forEach(function (name) {
      var field = control(row, name);
      if (field) field.addEventListener(name === "price" ? "input" : "change", function () { changed(row); });
    });
  });

  // Saves a row with fetch (the same form and token as without the script), then goes to
  // the next row. Should fetch itself fail, the form is posted as it would be without us.
  function saveRow(row) {
    var form = rowForm(row);
    if (!form || row.getAttribute("data-saving")) return;
    var problem = control(row, "problem");
    if (!window.fetch || !window.URLSearchParams) { form.submit(); return; }
    row.setAttribute("data-saving", "1");
    fetch(form.action, {
      method: "POST",
      credentials: "same-origin",
      headers: { Accept: "application/json" },
      body: new URLSearchParams(new FormData(form))
    }).then(function (response) {
      return response.json().then(function (answer) { return { ok: response.ok, answer: answer }; });
    }).then(function (reply) {
      row.removeAttribute("data-saving");
      if (!reply.ok) {
        if (problem) { problem.textContent = reply.answer.problem || "Not saved."; problem.hidden = false; }
        return;
      }
      if (problem) problem.hidden = true;
      ["rating", "price"].forEach(function (name) {
        var field = control(row, name);
        if (field) field.setAttribute("data-initial", field.value);
      });
      form.querySelector("[name=form]").value = reply.answer.form;
      row.classList.remove("dirty");
      row.classList.add("saved");
      if (reply.answer.drafts !== undefined) drafted(row, reply.answer);
      if (reply.answer.status) moved(row, reply.answer.status);
      var held = row.querySelector("[data-held]");
      if (held && reply.answer.heldMs > 0) {
        held.setAttribute("data-held", String(reply.answer.heldMs));
        held.hidden = false;
        countDown(held);
      }
      var index = rows.indexOf(row);
      if (index === current || current < 0) moveTo(index + 1);
    }).catch(function () {
      row.removeAttribute("data-saving");
      form.submit();
    });
  }
  // A rating that moved its lead to another status moves it in the tabs' counts too (Mine
  // counts one's open leads).
  function moved(row, status) {
    var was = row.getAttribute("data-status");
    if (was === status) return;
    var add = function (key, by) {
      var count = d.querySelector('[data-count="' + key + '"]');
      if (count) count.textContent = String(Math.max(0, Number(count.textContent) + by));
    };
    add(was, -1);
    add(status, 1);
    if (row.hasAttribute("data-mine") && (was === "open" || status === "open")) {
      add("mine", status === "open" ? 1 : -1);
    }
    row.setAttribute("data-status", status);
  }
  // A row kept as a draft (a project that reviews ratings): its badge, and the bar that
  // sends them all.
  function drafted(row, answer) {
    var badge = row.querySelector("[data-draft-badge]");
    if (badge) badge.hidden = answer.rated !== "draft";
    var bar = d.querySelector("[data-drafts-bar]");
    if (!bar) return;
    bar.hidden = answer.drafts === 0;
    var count = answer.drafts === 1 ? "1 rating" : answer.drafts + " ratings";
    bar.querySelector("[data-drafts-text]").textContent = count;
    bar.querySelector("[data-drafts-send]").textContent = "Send " + count;
  }
  all("form[data-row-form]").forEach(function (form) {
    form.addEventListener("submit", function (event) {
      event.preventDefault();
      var row = d.getElementById(form.id.replace("row-", "lead-"));
      if (row) saveRow(row);
    });
  });

  // Keys on the current row: 1-9 a label, 0 Lost, o Open, p the price, Enter saves.
  function rowKey(event, row) {
    var rating = control(row, "rating");
    var option = rating && rating.querySelector('option[data-key="' + event.key + '"]');
    if (option) {
      rating.value = option.value;
      changed(row);
      return true;
    }
    if (event.key === "p" && control(row, "price")) {
      var price = control(row, "price");
      price.focus();
      price.select();
      return true;
    }
    if (event.key === "Enter" && dirty(row)) {
      saveRow(row);
      return true;
    }
    return false;
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
    var help = d.querySelector("[data-keys-help]");
    if (event.key === "?" && help && !typing(event)) {
      event.preventDefault();
      if (help.open) help.close(); else help.showModal();
      return;
    }
    // In a row's price or rating: Enter saves the row, Escape leaves the field.
    var inRow = current >= 0 && rows[current].contains(event.target);
    if (inRow && typing(event)) {
      if (event.key === "Enter" && event.target.tagName === "SELECT") {
        event.preventDefault();
        saveRow(rows[current]);
      } else if (event.key === "Escape") {
        select(current, true);
      }
      return;
    }
    if (typing(event)) return;
    if (current >= 0 && rowKey(event, rows[current])) {
      event.preventDefault();
      return;
    }
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
      var waiting = ".held-row:not([hidden]) [data-undo]:not([hidden])";
      var undo = (row && row.querySelector(waiting)) ||
        d.querySelector("form[data-undo-form]:not([hidden]), " + waiting);
      if (undo) {
        event.preventDefault();
        if (undo.tagName === "FORM") undo.requestSubmit ? undo.requestSubmit() : undo.submit();
        else undo.click();
        return;
      }
    }
    // ---- f: the lead's next step (in the inbox, the current row's, in a dialog) ----
    if (event.key === "f" && (rows.length ? current >= 0 && openStep(rows[current]) : focusStep())) {
      event.preventDefault();
      return;
    }
    // ---- a: takes the lead (in the inbox, the current row's): assigns it to me ----
    if (event.key === "a") {
      var take = !rows.length ? d.querySelector("[data-take]")
        : current >= 0 ? rows[current].querySelector("[data-take]") : null;
      if (take) {
        event.preventDefault();
        take.click();
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

  // ---- next steps: times on the person's clock. A field shows a saved step's time
  // (data-utc) in local time; a form sends the offset from UTC of the time picked. ----
  function pad(n) { return (n < 10 ? "0" : "") + n; }
  function localField(date) {
    return date.getFullYear() + "-" + pad(date.getMonth() + 1) + "-" + pad(date.getDate()) +
      "T" + pad(date.getHours()) + ":" + pad(date.getMinutes());
  }
  all("input[data-utc]").forEach(function (input) {
    var date = new Date(input.getAttribute("data-utc"));
    if (!isNaN(date)) input.value = localField(date);
  });
  all("form[data-step-form]").forEach(function (form) {
    form.addEventListener("submit", function () {
      var picked = new Date(form.querySelector("[data-step-at]").value);
      if (!isNaN(picked)) form.querySelector("[data-offset]").value = -picked.getTimezoneOffset();
    });
  });
  var stepDialog = d.querySelector("[data-step-dialog]");
  // Opens the dialog for `row`'s lead: its step, else tomorrow at 9:00.
  function openStep(row) {
    var action = row.getAttribute("data-step-action");
    if (!stepDialog || !action) return false;
    var form = stepDialog.querySelector("form");
    var chip = row.querySelector("[data-next-step]");
    var at = chip ? new Date(chip.getAttribute("data-at")) : new Date();
    if (!chip) {
      at.setDate(at.getDate() + 1);
      at.setHours(9, 0, 0, 0);
    }
    form.action = action;
    form.querySelector("[data-step-at]").value = localField(at);
    form.querySelector("[data-step-note]").value = chip ? chip.getAttribute("data-note") : "";
    form.querySelector("[data-step-done]").hidden = !chip;
    var name = row.querySelector("a[data-open]");
    form.querySelector("[data-step-lead]").textContent = name ? name.textContent : "";
    stepDialog.showModal();
    form.querySelector("[data-step-at]").focus();
    return true;
  }
  function focusStep() {
    var field = d.querySelector("form[data-step-form] [data-step-at]");
    if (!field) return false;
    field.scrollIntoView({ block: "center" });
    field.focus();
    return true;
  }
  if (stepDialog) {
    stepDialog.querySelector("[data-step-cancel]").addEventListener("click", function () {
      stepDialog.close();
    });
    all("[data-next-step]").forEach(function (chip) {
      chip.addEventListener("click", function () { openStep(chip.closest("[data-row]")); });
    });
  }

  // One submission per rating form: a second Enter or click while the first is on its way
  // does nothing (the server refuses a replay of the form's token too).
  all("form[data-rate-form], form#bulk, form[data-undo-form]").forEach(function (f) {
    f.addEventListener("submit", function (event) {
      if (f.getAttribute("data-sent")) event.preventDefault();
      else f.setAttribute("data-sent", "1");
    });
  });

  // ---- the undo window: a live countdown; when it ends, the Undo goes ----
  function countDown(held) {
    var ends = Date.now() + Number(held.getAttribute("data-held"));
    var countdown = held.querySelector("[data-countdown]");
    var form = held.querySelector("[data-undo-form], [data-undo]");
    var timer;
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
    timer = setInterval(tick, 250);
    tick();
  }
  all("[data-held]").forEach(function (held) {
    if (!held.hidden && held.getAttribute("data-held")) countDown(held);
  });

  // ---- live: "N new leads" without a reload, at most 5 seconds late, and the count in
  // the tab's title, so that a tab in the background says a lead came in ----
  var live = d.querySelector("[data-live]");
  if (live && window.fetch) {
    var url = live.getAttribute("data-live");
    var title = d.title;
    var poll = function () {
      fetch(url, { credentials: "same-origin", headers: { Accept: "application/json" } })
        .then(function (r) { return r.ok ? r.json() : null; })
        .then(function (answer) {
          if (!answer || !answer.count) return;
          var text = live.querySelector("[data-live-text]");
          text.textContent = answer.count === 1 ? "1 new lead" : answer.count + " new leads";
          live.hidden = false;
          d.title = "(" + answer.count + ") " + title;
        })
        .catch(function () { /* offline for a moment: try again at the next tick */ });
    };
    setInterval(poll, 5000);
  }

  // ---- a GA4 event name checked as it is typed: the count of characters, and what is
  // wrong in words. The rules are the server's (leadtrack-core's label.rs), and the reserved
  // names and prefixes come from the page, which has them from there. ----
  all("[data-ga4-event]").forEach(function (field) {
    var max = Number(field.getAttribute("data-max"));
    var reserved = field.getAttribute("data-reserved").split(" ");
    var prefixes = field.getAttribute("data-reserved-prefixes").split(" ");
    var count = d.getElementById(field.id + "-count");
    var status = d.getElementById(field.id + "-status");
    var problem = function (name) {
      var lower = name.toLowerCase();
      var bad = name.match(/[^A-Za-z0-9_]/);
      var prefix = prefixes.filter(function (p) { return lower.indexOf(p) === 0; })[0];
      if (!name) return "";
      if (!/^[A-Za-z]/.test(name)) return "Start with a letter.";
      if (name.length > max) return "Too long: GA4 takes at most " + max + " characters.";
      if (bad) return "“" + bad[0] + "” is not allowed: use only letters, digits and _.";
      if (reserved.indexOf(lower) >= 0) return "GA4 keeps “" + name + "” for its own events and drops it: choose another name.";
      if (prefix) return "GA4 keeps names starting with “" + prefix + "” for itself: choose another name.";
      return "";
    };
    var check = function () {
      var message = problem(field.value);
      count.textContent = field.value.length + "/" + max;
      count.classList.toggle("over", field.value.length > max);
      status.textContent = message;
      field.setCustomValidity(message);
      field.setAttribute("aria-invalid", message ? "true" : "false");
    };
    field.addEventListener("input", check);
    check();
  });

  // ---- a Copy button after each value to paste elsewhere (a webhook's address, a secret
  // shown once, an API key), where the browser lets a page write to the clipboard ----
  if (navigator.clipboard) all("[data-copyable]").forEach(function (source) {
    var button = d.createElement("button");
    button.type = "button";
    button.className = "quiet copy";
    button.textContent = "Copy";
    button.setAttribute("aria-label", "Copy " + source.getAttribute("data-copyable"));
    var said = d.createElement("span");
    said.className = "visually-hidden";
    said.setAttribute("role", "status");
    button.addEventListener("click", function () {
      navigator.clipboard.writeText(source.textContent.trim()).then(function () {
        button.textContent = "Copied";
        said.textContent = "Copied " + source.getAttribute("data-copyable");
        setTimeout(function () { button.textContent = "Copy"; said.textContent = ""; }, 2000);
      });
    });
    source.insertAdjacentElement("afterend", button);
    button.insertAdjacentElement("afterend", said);
  });

  // ---- @ in a comment: the teammates whose name or handle starts with what follows it,
  // picked with the arrow keys and Enter (or Tab), or a click. Names compare as the server
  // compares them: any case, accents or none. ----
  var fold = function (text) {
    return text.normalize("NFKD").replace(/[\u0300-\u036f]/g, "").toLowerCase();
  };
  all("[data-mention]").forEach(function (field) {
    var list = d.getElementById(field.getAttribute("data-mention"));
    var options = all("[data-handle]", list);
    var active = -1;
    // The word being typed after an @ at the caret, if there is one.
    var typed = function () {
      var before = field.value.slice(0, field.selectionStart);
      var match = before.match(/(^|[^\w@])@([^\s@]*)$/);
      return match ? { start: before.length - match[2].length, word: match[2] } : null;
    };
    var shown = function () { return options.filter(function (o) { return !o.hidden; }); };
    var highlight = function (index) {
      var visible = shown();
      active = visible.length ? (index + visible.length) % visible.length : -1;
      visible.forEach(function (o, i) { o.setAttribute("aria-selected", i === active ? "true" : "false"); });
      if (active >= 0) field.setAttribute("aria-activedescendant", visible[active].id);
      else field.removeAttribute("aria-activedescendant");
    };
    var close = function () {
      list.hidden = true;
      field.setAttribute("aria-expanded", "false");
      field.removeAttribute("aria-activedescendant");
    };
    var update = function () {
      var at = typed();
      if (!at) return close();
      var word = fold(at.word);
      options.forEach(function (o) {
        var words = fold(o.textContent + " " + o.getAttribute("data-handle")).split(/[\s.@_-]+/);
        o.hidden = !words.some(function (w) { return w.indexOf(word) === 0; });
      });
      list.hidden = shown().length === 0;
      field.setAttribute("aria-expanded", list.hidden ? "false" : "true");
      highlight(0);
    };
    var pick = function (option) {
      var at = typed();
      if (!at) return;
      var end = field.selectionStart;
      var handle = option.getAttribute("data-handle") + " ";
      field.value = field.value.slice(0, at.start) + handle + field.value.slice(end);
      field.selectionStart = field.selectionEnd = at.start + handle.length;
      close();
      field.focus();
    };
    field.addEventListener("input", update);
    field.addEventListener("blur", function () { setTimeout(close, 150); });
    field.addEventListener("keydown", function (event) {
      if (list.hidden) return;
      var visible = shown();
      if (event.key === "ArrowDown" || event.key === "ArrowUp") {
        highlight(active + (event.key === "ArrowDown" ? 1 : -1));
      } else if ((event.key === "Enter" || event.key === "Tab") && active >= 0) {
        pick(visible[active]);
      } else if (event.key === "Escape") {
        close();
      } else {
        return;
      }
      event.preventDefault();
      event.stopPropagation();
    });
    options.forEach(function (o) {
      o.addEventListener("mousedown", function (event) { event.preventDefault(); pick(o); });
    });
  });
})();
