/* The demo's contact page: shows live what leadtrack.js captured, and what became of the
 * form. The form stays on the page: the script sends it, this only reports. */
(function () {
  "use strict";
  var body = document.body, project = body.getAttribute("data-project"),
    endpoint = body.getAttribute("data-endpoint") || location.origin;
  var CLICKS = [["gclid", "Google"], ["gbraid", "Google (iOS app)"], ["wbraid", "Google (iOS web)"],
    ["msclkid", "Microsoft"], ["li_fat_id", "LinkedIn"], ["ttclid", "TikTok"], ["fbc", "Meta click"], ["fbp", "Meta browser"]];
  var UTM = [["utm_source", "Source"], ["utm_medium", "Medium"], ["utm_campaign", "Campaign"],
    ["utm_term", "Term"], ["utm_content", "Content"]];
  var ANALYTICS = [["cid", "GA client"], ["sid", "GA session"]];

  function el(tag, text, cls) {
    var e = document.createElement(tag);
    if (text != null) e.textContent = text;
    if (cls) e.className = cls;
    return e;
  }
  function fill(id, rows, values, missing) {
    var dl = document.getElementById(id);
    dl.textContent = "";
    rows.forEach(function (row) {
      var v = values[row[0]];
      dl.appendChild(el("dt", row[1]));
      var dd = el("dd", v ? String(v) : missing || "none", v ? "" : "none");
      dd.id = "cap-" + row[0];
      dl.appendChild(dd);
    });
  }
  var last = null; // what was last shown: redraw only on a change, not every tick
  function render() {
    if (!window.leadtrack || !leadtrack.attribution) return;
    var a = leadtrack.attribution() || {}, flow = leadtrack.channelFlow() || [], c = leadtrack.consent();
    var now = JSON.stringify([a, flow, c]);
    if (now === last) return;
    last = now;
    fill("captured-clicks", CLICKS, a);
    fill("captured-utm", UTM, a);
    fill("captured-analytics", ANALYTICS, a);
    var ol = document.getElementById("captured-flow");
    ol.textContent = "";
    flow.forEach(function (entry) {
      var ch = entry.ch || {}, li = el("li", (ch.s || "?") + " / " + (ch.m || "?") + (ch.cm ? " · " + ch.cm : ""));
      var t = el("time", new Date(entry.t).toLocaleString());
      t.setAttribute("datetime", new Date(entry.t).toISOString());
      li.appendChild(t);
      ol.appendChild(li);
    });
    if (!flow.length) ol.appendChild(el("li", "none yet", "none"));
    fill("captured-consent", [["adUserData", "Ad user data"], ["adPersonalization", "Ad personalization"]],
      c || {}, "not set (no Consent Mode here)");
  }
  function result(cls, title, lines) {
    var box = document.getElementById("result");
    box.className = cls;
    box.textContent = "";
    box.appendChild(el("h3", title));
    lines.forEach(function (line) { box.appendChild(line); });
    var send = document.getElementById("send");
    if (send) send.disabled = false;
  }
  document.addEventListener("submit", function (e) {
    if (e.target && e.target.id === "contact-form") {
      e.preventDefault(); // leadtrack.js already took the submission; stay to show the result
      document.getElementById("send").disabled = true;
    }
  });
  // A random receipt goes with the form (a hidden field): with it, and only with it, the
  // server shows this page the lead as it stored it.
  var receipt = (window.crypto && crypto.randomUUID) ? crypto.randomUUID()
    : Array.prototype.map.call(crypto.getRandomValues(new Uint8Array(16)), function (b) {
      return (b + 256).toString(16).slice(1);
    }).join("");
  var field = document.getElementById("receipt");
  if (field) field.value = receipt;

  var shownLead = null; // a double submit answers twice with one lead: show it once
  document.addEventListener("leadtrack:lead", function (e) {
    var d = e.detail || {}, link = el("a", "Open lead " + d.leadId + " in the dashboard");
    if (d.leadId == null || d.leadId === shownLead) return;
    shownLead = d.leadId;
    link.href = endpoint + "/projects/" + encodeURIComponent(project) + "/leads/" + d.leadId;
    var p = el("p");
    p.appendChild(link);
    var ok = el("p", "Saved as lead " + d.leadId + ". Sending it again would not make a second one.");
    ok.id = "thanks";
    var heading = el("h4", "As the API stored it"), stored = el("pre", "Reading it back…");
    stored.id = "stored";
    result("ok", "Thank you, we will be in touch", [ok, p, heading, stored]);
    render();
    var url = endpoint + "/demo/lead?projectId=" + encodeURIComponent(project) + "&leadId=" + d.leadId +
      "&receipt=" + encodeURIComponent(receipt);
    fetch(url, { credentials: "omit" }).then(function (r) { return r.json(); }).then(function (j) {
      stored.textContent = JSON.stringify(j.lead || j, null, 2);
    }, function () { stored.textContent = "Could not read it back."; });
  });
  document.addEventListener("leadtrack:error", function (e) {
    var d = e.detail || {};
    if (d.queued) {
      var q = el("p", "The server could not be reached. The lead waits in this browser and is sent as soon as it can be: on the next page, when the connection returns, or in a moment.");
      q.id = "queued";
      result("queued", "Saved in this browser", [q]);
    } else {
      result("bad", "Not sent", [el("p", d.error || "The server refused the lead.")]);
    }
  });
  render();
  setInterval(render, 500);
})();
