/*! leadtrack.js: first-party lead capture for leadtrack. No third-party requests.
 * <script src="https://HOST/leadtrack.js" data-project-id="PROJECT_ID" async></script>
 * <form data-leadtrack="Contact">...</form>
 * Cookies are host-only (no Domain attribute), so www.example.com and example.com keep
 * separate copies: simple, and no public-suffix list is needed. A lead the API did not
 * acknowledge waits in localStorage (lt_outbox, keyed by its event id) and is sent again. */
(function (w, d) {
  "use strict";
  if (w.leadtrack && w.leadtrack.version) return; // included twice: the first copy stays

  var P = "[leadtrack]", NO_NAME = "undefined form name", CLICK_IDS = ["gclid", "gbraid", "wbraid"];
  // Google's cookies, read when the URL and our lt_* cookies have nothing. Caveat: _gcl_gb was
  // also seen holding a wbraid; change the mapping here if that proves true.
  var GOOGLE_COOKIES = { gclid: "_gcl_aw", gbraid: "_gcl_gb" };
  // Click ids that name a paid channel when the URL has no utm_* parameters.
  var CLICK_SOURCES = { gclid: "google", gbraid: "google", wbraid: "google", fbclid: "facebook",
    msclkid: "bing", ttclid: "tiktok", li_fat_id: "linkedin", rdt_cid: "reddit",
    ScCid: "snapchat", sccid: "snapchat", epik: "pinterest", twclid: "x" };
  // Other platforms' click ids, each kept on its own (90 days). Microsoft's auto-tagging adds
  // msclkid to the landing URL (https://help.ads.microsoft.com/apex/index/3/en/60125) and its
  // UET tag keeps it in the _uetmsclkid cookie as "_uet<msclkid>". Reddit adds rdt_cid,
  // Snapchat ScCid (some links spell it sccid), Pinterest epik and X twclid.
  var OTHER_CLICK_IDS = ["msclkid", "li_fat_id", "ttclid", "rdt_cid", "ScCid", "epik", "twclid"];
  var URL_SPELLINGS = { ScCid: "sccid" };
  // The platforms' own browser cookies, read as their pixels keep them: TikTok's _ttp,
  // Reddit's _rdt_uuid, Snapchat's _scid and Pinterest's _epik (as Meta's _fbp is).
  var PLATFORM_COOKIES = ["_ttp", "_rdt_uuid", "_scid", "_epik"];
  // The outbox: at most 50 leads, none older than 7 days; retries back off from 5 s to 5 min.
  var OUTBOX = "lt_outbox", OUTBOX_MAX = 50, OUTBOX_MS = 7 * 864e5, RETRY_MS = 5000, RETRY_MAX_MS = 3e5;
  var UTM = { s: "utm_source", m: "utm_medium", cm: "utm_campaign", ct: "utm_content", tm: "utm_term" };
  // Field name or id (lower case, a-z0-9 only, "your" prefix dropped: "your-email") -> role.
  var NAMES = { firstname: "firstName", fname: "firstName", givenname: "firstName",
    lastname: "lastName", lname: "lastName", surname: "lastName", familyname: "lastName",
    name: "fullName", fullname: "fullName", company: "companyName", companyname: "companyName",
    organization: "companyName", organisation: "companyName", message: "message", comment: "message",
    comments: "message", inquiry: "message", enquiry: "message", email: "email", phone: "phone",
    tel: "phone", mobile: "phone" };
  var AUTOCOMPLETE = { email: "email", tel: "phone", "given-name": "firstName",
    "family-name": "lastName", organization: "companyName", name: "fullName" };
  var SKIP = /^(password|file|submit|button|reset|image|fieldset|object|output)$/;
  var SECRET = /csrf|xsrf|token|nonce|captcha/i; // never ship anti-forgery or captcha values
  var cfg = {}, started = false, me = d.currentScript, lastHref = "";
  // Cookies set while waitForConsent holds them back, by name: [value, days].
  var held = {};
  var inflight = {}, retryTimer = 0, retryDelay = 0, flushing = false;
  // The event id last sent per form, with a fingerprint of what was sent (kept here, not in
  // the DOM, so no personal data ends up in attributes).
  var formIds = typeof WeakMap === "function" ? new WeakMap() : null;
  // Each captured form gets a honeypot field that people never see or reach (bots fill every
  // field), and the time it was first shown: the server holds a lead as spam when the field
  // is filled or the form was sent within 2 seconds. The field has no name, so the host's
  // own submission carries nothing of it.
  var HONEYPOT = "data-leadtrack-honeypot", shownAt = formIds && new WeakMap();

  // ---- cookies: values are encodeURIComponent'ed on write, decoded on read ----
  function getCookie(name, isPrefix) {
    if (!isPrefix && held[name]) return held[name][0];
    var all = d.cookie ? d.cookie.split(/;\s*/) : [];
    for (var i = 0; i < all.length; i++) {
      var eq = all[i].indexOf("="), n = all[i].slice(0, eq);
      if (eq > 0 && (isPrefix ? n.indexOf(name) === 0 : n === name)) {
        try { return decodeURIComponent(all[i].slice(eq + 1)); } catch (e) { return all[i].slice(eq + 1); }
      }
    }
    return "";
  }
  function setCookie(name, value, days) {
    if (holding()) { held[name] = days > 0 ? [value, days] : null; return; }
    d.cookie = name + "=" + encodeURIComponent(value) + "; Max-Age=" + Math.round(days * 86400) +
      "; Path=/; SameSite=Lax" + (location.protocol === "https:" ? "; Secure" : "");
  }
  function holding() { return !!cfg.waitForConsent && storageConsent() !== "granted"; }
  function release() { // consent arrived: the cookies held back are set now
    if (holding()) return;
    var h = held;
    held = {};
    for (var k in h) if (h[k]) setCookie(k, h[k][0], h[k][1]);
  }

  // ---- helpers ----
  function params() { return new URLSearchParams(location.search); }
  function isIp(h) { return /^[\d.]+$|:/.test(h); }
  function token(s, prefix) { // value of the "$"-separated token starting with prefix
    var t = s.split("$").filter(function (x) { return x.charAt(0) === prefix; })[0];
    return t ? t.slice(1) : "";
  }
  function site(h) { // crude registrable host: last two labels, three for "co.uk"-like suffixes
    var p = h.split("."), n = p.length;
    if (isIp(h)) return h;
    return p.slice(n > 2 && p[n - 1].length === 2 && /^(co|com|net|org|gov|edu|ac|or|ne|go)$/.test(p[n - 2]) ? -3 : -2).join(".");
  }
  function uuid() {
    var c = w.crypto, b = new Uint8Array(16), s = "";
    if (c && c.randomUUID) return c.randomUUID(); // secure contexts only
    for (var i = 0; i < 16; i++) b[i] = Math.random() * 256;
    if (c && c.getRandomValues) c.getRandomValues(b);
    for (i = 0; i < 16; i++) s += (b[i] + 256).toString(16).slice(1);
    return s;
  }
  function clean(o) { // trimmed copy without empty values
    var r = {};
    for (var k in o || {}) {
      var v = typeof o[k] === "string" ? o[k].trim() : o[k];
      if (v != null && v !== "") r[k] = v;
    }
    return r;
  }
  function emit(name, detail) {
    try { d.dispatchEvent(new CustomEvent("leadtrack:" + name, { detail: detail })); } catch (e) { /* old browser */ }
  }

  // ---- attribution ----
  function googleClickId(v) { // GCL.<seconds>.<id>; the newer 2.1.k<id>$i<seconds> is tolerated
    if (/^GCL\./.test(v)) return v.split(".").slice(2).join(".");
    return /^\d+\.\d+\./.test(v) ? token(v.replace(/^\d+\.\d+\./, ""), "k") : "";
  }
  function sessionId(v) { // GS1.1.<sid>.<n>... or GS2.1.s<sid>$o<n>$... (token order not fixed)
    if (/^GS1\./.test(v)) return v.split(".")[2] || "";
    return /^GS2\./.test(v) ? token(v.split(".").slice(2).join("."), "s") : "";
  }
  function hasUtm(q) { for (var k in UTM) if (q.get(UTM[k])) return true; return false; }
  function uetClickId(v) { return v.replace(/^_uet/, ""); }
  // ---- consent: set by init({consent}), else Google Consent Mode's state in the dataLayer ----
  // gtag("consent", "default" | "update", {ad_storage, ad_user_data, ad_personalization, ...}):
  // https://developers.google.com/tag-platform/security/guides/consent
  function grant(v) { return v === true || v === "granted" ? "granted" : v === false || v === "denied" ? "denied" : ""; }
  function consentMode() { // Google Consent Mode's state: gtag("consent", "default" | "update", {...}) pushes its arguments
    var l = w.dataLayer, m = null;
    for (var i = 0; l && i < l.length; i++) {
      var e = l[i];
      if (e && e[0] === "consent" && (e[1] === "default" || e[1] === "update") && e[2] && typeof e[2] === "object") {
        m = m || {};
        for (var k in e[2]) m[k] = e[2][k];
      }
    }
    return m;
  }
  function consent() { // {adUserData, adPersonalization}, or null while unknown; init's answer wins
    var c = cfg.consent, m = c ? null : consentMode();
    if (m) c = { adUserData: m.ad_user_data, adPersonalization: m.ad_personalization };
    if (!c) return null;
    var r = clean({ adUserData: grant(c.adUserData), adPersonalization: grant(c.adPersonalization) });
    return r.adUserData || r.adPersonalization ? r : null;
  }
  function storageConsent() { // may cookies be set: init's adStorage, else granted with either ad signal; Consent Mode's ad_storage
    var c = cfg.consent, m = c ? null : consentMode(), g = consent();
    if (c) return grant(c.adStorage) || (g ? (g.adUserData === "granted" || g.adPersonalization === "granted" ? "granted" : "denied") : "");
    return m ? grant(m.ad_storage) : "";
  }
  function attribution() {
    var q = params(), a = {}, ga = getCookie("_ga").split("."), flow = readFlow(), u = q;
    CLICK_IDS.forEach(function (k) {
      a[k] = q.get(k) || getCookie("lt_" + k) || (GOOGLE_COOKIES[k] ? googleClickId(getCookie(GOOGLE_COOKIES[k])) : "");
    });
    OTHER_CLICK_IDS.forEach(function (k) {
      a[k] = fromUrl(q, k) || getCookie("lt_" + k) || (k === "msclkid" ? uetClickId(getCookie("_uetmsclkid")) : "");
    });
    PLATFORM_COOKIES.forEach(function (c) { a[c] = getCookie(c); });
    a.cid = ga.length >= 4 ? ga.slice(-2).join(".") : ""; // GA1.1.<random>.<seconds>
    a.sid = sessionId(getCookie("_ga_", true));
    a.fbp = getCookie("_fbp");
    a.fbc = getCookie("_fbc");
    // utm_* of this page, else of the latest channel entry's landing page: a form on a later
    // page still carries the campaign that brought the visitor.
    if (!hasUtm(q) && flow.length) try { u = new URL(flow[flow.length - 1].lp).searchParams; } catch (e) { /* bad lp */ }
    for (var k in UTM) a[UTM[k]] = u.get(UTM[k]);
    return clean(a);
  }

  // ---- channel path (lt_channelflow, the GTM tag's format) ----
  function readFlow() {
    try { var f = JSON.parse(getCookie("lt_channelflow")); return Array.isArray(f) ? f : []; } catch (e) { return []; }
  }
  function chan(s, m) { return { s: s, m: m, cm: "", ct: "", tm: "" }; }
  function channel(q, route) { // null: this page view carries no channel signal
    var c = {}, k;
    if (hasUtm(q)) { for (k in UTM) c[k] = q.get(UTM[k]) || ""; return c; }
    for (k in CLICK_SOURCES) if (q.get(k)) return chan(CLICK_SOURCES[k], "cpc");
    if (route) return null; // a single-page app's route change: the referrer is the first page's
    try {
      var r = new URL(d.referrer).hostname;
      if (r && site(r) !== site(location.hostname)) return chan(r, "referral");
    } catch (e) { /* no referrer */ }
    return null;
  }
  function updateFlow(q, route) {
    var flow = readFlow(), last = flow[flow.length - 1], active = !!getCookie("lt_session"), ch = channel(q, route);
    setCookie("lt_session", "1", 1 / 48); // 30 minutes, refreshed on every page view
    if (!ch) {
      if (active && last) return; // internal navigation
      ch = chan("(direct)", "(none)");
    } else if (active && last && last.ch && Object.keys(ch).every(function (k) { return (last.ch[k] || "") === ch[k]; })) {
      return; // same channel within the session
    }
    flow.push({ t: Date.now(), ch: ch, lp: location.href.slice(0, 800) });
    while (flow.length > 1 && encodeURIComponent(JSON.stringify(flow)).length > 3000) flow.shift(); // newest win
    setCookie("lt_channelflow", JSON.stringify(flow), 395);
  }

  function fromUrl(q, k) { return q.get(k) || (URL_SPELLINGS[k] ? q.get(URL_SPELLINGS[k]) : ""); }
  function subdomainIndex(h) { return isIp(h) || h === "localhost" ? 1 : h.split(".").length - 1; }
  function capture(route) { // on each page load, and each route change of a single-page app
    var q = params(), fbclid = q.get("fbclid"), h = location.hostname, r = new Uint32Array(1);
    lastHref = location.href;
    // A new Google click replaces the whole stored click (no gclid of one click next to the
    // gbraid of another); 90 days, so it survives navigation before the form is sent.
    if (CLICK_IDS.some(function (k) { return q.get(k); })) {
      CLICK_IDS.forEach(function (k) { setCookie("lt_" + k, q.get(k) || "", q.get(k) ? 90 : -1); });
    }
    // _fbc = fb.<subdomainIndex>.<ms>.<fbclid>, rebuilt when it holds another click
    OTHER_CLICK_IDS.forEach(function (k) { if (fromUrl(q, k)) setCookie("lt_" + k, fromUrl(q, k), 90); });
    if (fbclid && getCookie("_fbc").split(".").slice(3).join(".") !== fbclid) {
      setCookie("_fbc", "fb." + subdomainIndex(h) + "." + Date.now() + "." + fbclid, 90);
    }
    // Without Meta's pixel, a browser id of its format (fb.<subdomainIndex>.<creationTime>.
    // <randomNumber>, https://developers.facebook.com/docs/marketing-api/conversions-api/
    // parameters/fbp-and-fbc/) for the Conversions API; the pixel, if it comes later, keeps it.
    if (cfg.generateFbp !== false && !w.fbq && !getCookie("_fbp")) {
      if (w.crypto && w.crypto.getRandomValues) w.crypto.getRandomValues(r); else r[0] = Math.random() * 4294967296;
      setCookie("_fbp", "fb." + subdomainIndex(h) + "." + Date.now() + "." + (r[0] >>> 1), 90);
    }
    updateFlow(q, route);
  }
  function onRoute() { // history.pushState / replaceState / popstate
    if (location.href !== lastHref) capture(true);
  }
  function watchRoutes() {
    ["pushState", "replaceState"].forEach(function (m) {
      var orig = history[m];
      if (typeof orig !== "function") return;
      history[m] = function () {
        var r = orig.apply(this, arguments);
        try { onRoute(); } catch (e) { console.error(P, e); }
        return r;
      };
    });
    w.addEventListener("popstate", guard(onRoute));
  }

  // ---- sending ----
  function send(body, viaForm) {
    var url = cfg.endpoint + "/api/leads/createLead", req;
    try {
      // Without keepalive (Firefox < 133 ignores it) the fetch dies when the form navigates away:
      // auto-capture takes the beacon there.
      if (viaForm && !("keepalive" in Request.prototype)) throw new Error("no keepalive");
      // JSON costs a CORS preflight cross-origin but lets us read the lead id. keepalive lets the
      // request (preflight included, checked in Chromium) outlive a page that navigates away.
      req = fetch(url, { method: "POST", mode: "cors", credentials: "omit", keepalive: true,
        headers: { "Content-Type": "application/json" }, body: body });
    } catch (e) { // no fetch, or it threw at once: a text/plain beacon needs no preflight; no answer
      if (navigator.sendBeacon && navigator.sendBeacon(url, new Blob([body], { type: "text/plain" }))) return Promise.resolve(null);
      return Promise.reject(new Error("could not send the lead: " + e));
    }
    return req.then(function (r) {
      return r.json().catch(function () { return {}; }).then(function (j) {
        if (r.ok) return j.leadId == null ? null : j.leadId;
        var err = new Error("createLead failed: HTTP " + r.status + (j.code ? " " + j.code : "") + (j.message ? ": " + j.message : ""));
        err.status = r.status;
        err.code = j.code;
        throw err;
      });
    }, function (e) { throw new Error("createLead failed: " + e.message); }); // network, CORS, keepalive quota
  }
  function fail(e) {
    e = e instanceof Error ? e : new Error(String(e));
    console.warn(P, e.message);
    emit("error", { error: e.message, queued: !!e.queued });
    return Promise.reject(e);
  }

  // ---- the outbox: {eventId: {b: body, t: ms}} in localStorage ----
  function storage() { try { return w.localStorage; } catch (e) { return null; } } // blocked in some privacy modes
  function outbox() {
    try { var o = JSON.parse(storage().getItem(OUTBOX)); return o && typeof o === "object" ? o : {}; } catch (e) { return {}; }
  }
  function saveOutbox(o) {
    var ids = Object.keys(o).sort(function (a, b) { return o[a].t - o[b].t; }), now = Date.now();
    ids.forEach(function (id, i) { if (now - o[id].t > OUTBOX_MS || ids.length - i > OUTBOX_MAX) delete o[id]; });
    try {
      if (Object.keys(o).length) storage().setItem(OUTBOX, JSON.stringify(o)); else storage().removeItem(OUTBOX);
    } catch (e) { /* full, or no storage */ }
  }
  function keep(id, body) { var o = outbox(); o[id] = { b: body, t: o[id] ? o[id].t : Date.now() }; saveOutbox(o); }
  function done(id) { var o = outbox(); if (o[id]) { delete o[id]; saveOutbox(o); } }
  // Worth sending again: no answer at all, a timeout, too many requests, or a server error.
  function retryable(e) { return !e.status || e.status === 408 || e.status === 429 || e.status >= 500; }
  function later() {
    if (retryTimer) return;
    retryDelay = Math.min(retryDelay ? retryDelay * 2 : RETRY_MS, RETRY_MAX_MS);
    retryTimer = setTimeout(function () { retryTimer = 0; flush(); }, retryDelay);
  }
  // Sends a lead's body, keeping it in the outbox until the API acknowledges it or refuses it
  // for good. The event id makes a repeat a merge into the same lead, never a second one.
  function deliver(id, body, viaForm) {
    keep(id, body);
    inflight[id] = 1;
    return send(body, viaForm).then(function (leadId) {
      delete inflight[id];
      // null: sent as a beacon (browsers without keepalive), which gets no answer; it stays
      // for the next page, where a repeat is a merge into the same lead.
      if (leadId !== null) done(id);
      retryDelay = 0;
      return leadId;
    }, function (e) {
      delete inflight[id];
      if (retryable(e)) { e.queued = true; later(); } else done(id);
      throw e;
    });
  }
  function flush() { // the outbox, oldest first, one at a time
    if (flushing || !cfg.projectId) return;
    var o = outbox(), ids = Object.keys(o).filter(function (id) { return !inflight[id]; })
      .sort(function (a, b) { return o[a].t - o[b].t; });
    flushing = true;
    (function next(i) {
      if (i >= ids.length) { flushing = false; return; }
      deliver(ids[i], o[ids[i]].b, false).then(function (leadId) {
        emit("lead", { leadId: leadId, uniqueEventId: ids[i], retried: true });
        next(i + 1);
      }, function (e) {
        if (e.queued) { flushing = false; return; } // still unreachable: wait for the next try
        console.warn(P, e.message);
        next(i + 1);
      });
    })(0);
  }
  function trackLead(o, viaForm) {
    try {
      o = o || {};
      if (!cfg.projectId) throw new Error("call leadtrack.init({projectId, endpoint}) first");
      var fd = Object.assign({}, o.formData);
      fd.uniqueEventId = fd.uniqueEventId || uuid(); // the server deduplicates on it
      fd.formName = fd.formName || NO_NAME;
      var body = { projectId: cfg.projectId, userData: clean(o.userData),
        attributionData: clean(Object.assign(attribution(), o.attributionData)), // caller wins
        formData: fd, channelFlow: readFlow() }, given = consent();
      if (o.uniqueIdentifier != null && o.uniqueIdentifier !== "") body.uniqueIdentifier = String(o.uniqueIdentifier);
      if (given) body.consent = given;
      if (viaForm && o.botCheck) body.botCheck = o.botCheck;
      return deliver(fd.uniqueEventId, JSON.stringify(body), viaForm).then(function (id) {
        emit("lead", { leadId: id, formName: fd.formName, uniqueEventId: fd.uniqueEventId });
        return id;
      }, fail);
    } catch (e) { return fail(e); }
  }

  // ---- the honeypot and the time to fill ----
  function arm(f) {
    if (!shownAt || shownAt.has(f)) return;
    shownAt.set(f, Date.now());
    var box = d.createElement("div"), input = d.createElement("input");
    box.setAttribute("aria-hidden", "true"); // hidden from assistive tech, and off-screen
    box.style.cssText = "position:absolute;left:-10000px;top:auto;width:1px;height:1px;overflow:hidden";
    input.type = "text"; input.tabIndex = -1; input.autocomplete = "off"; input.placeholder = "Website";
    input.setAttribute(HONEYPOT, ""); input.setAttribute("data-leadtrack-ignore", "");
    box.appendChild(input);
    f.appendChild(box);
  }
  function armAll() { [].forEach.call(d.querySelectorAll("form[data-leadtrack]"), arm); }
  function watchForms() { // forms a single-page app adds later are armed as they appear
    if (typeof MutationObserver !== "function") return;
    var pending = 0;
    new MutationObserver(function () {
      if (!pending) pending = setTimeout(function () { pending = 0; armAll(); }, 50);
    }).observe(d.documentElement, { childList: true, subtree: true });
  }
  function botCheck(f) { // null for a form never armed: nothing is known of it
    var at = shownAt && shownAt.get(f), hp = f.querySelector("[" + HONEYPOT + "]");
    return at ? { honeypot: hp ? String(hp.value || "") : "", elapsedMs: Date.now() - at } : null;
  }

  // ---- automatic <form data-leadtrack> capture ----
  function norm(s) { // "contact[first-name]" -> "firstname", "your-email" -> "email"
    return (s || "").toLowerCase().replace(/^.*\[([^\]]+)\]$/, "$1").replace(/[^a-z0-9]/g, "").replace(/^your/, "");
  }
  function readForm(f) {
    var u = {}, fields = {}, fd = {}, full;
    [].forEach.call(f.elements, function (el) {
      var type = (el.type || "").toLowerCase(), key = el.name || el.id, v = String(el.value || "").trim(), role;
      if (!key || el.disabled || SKIP.test(type) || SECRET.test(key) || el.hasAttribute("data-leadtrack-ignore") ||
        (/^(checkbox|radio)$/.test(type) && !el.checked)) return;
      if (el.tagName === "TEXTAREA" || /^(text|email|tel|search)$/.test(type)) { // autocomplete, type, then name
        role = (el.getAttribute("autocomplete") || "").toLowerCase().split(/\s+/)
          .map(function (t) { return AUTOCOMPLETE[t]; }).filter(Boolean)[0] ||
          { email: "email", tel: "phone" }[type] || NAMES[norm(el.name)] || NAMES[norm(el.id)];
      }
      if (role && !v) return;
      if (role === "message" && !fd.formMessage) fd.formMessage = v;
      else if (role === "fullName" && !full) full = [key, v];
      else if (role && role !== "message" && role !== "fullName" && !u[role]) u[role] = v;
      else { // everything else (or a second field of a taken role) goes to formFields
        (type === "select-multiple" ? [].filter.call(el.options, function (o) { return o.selected; })
          .map(function (o) { return o.value; }) : [el.value]).forEach(function (x) {
          if (x !== "") fields[key] = key in fields ? [].concat(fields[key], x) : x;
        });
      }
    });
    if (full && !u.firstName && !u.lastName) { // a lone name field: "Ada King Lovelace" -> "Ada" + "King Lovelace"
      var i = full[1].search(/\s/);
      u.firstName = i < 0 ? full[1] : full[1].slice(0, i);
      if (i > 0) u.lastName = full[1].slice(i).trim();
    } else if (full) fields[full[0]] = full[1];
    // The same content submitted again (a double click, a retry) reuses its event id, so the
    // server keeps one lead; a form reused with new content (single-page apps) gets a new id.
    var print = JSON.stringify([u, fd.formMessage || "", fields, full || ""]), last = formIds && formIds.get(f);
    fd.uniqueEventId = last && last.print === print ? last.id : uuid();
    if (formIds) formIds.set(f, { print: print, id: fd.uniqueEventId });
    fd.formName = f.getAttribute("data-leadtrack") || f.getAttribute("name") || f.getAttribute("id") || NO_NAME;
    fd.formFields = fields;
    return { userData: u, formData: fd, botCheck: botCheck(f) };
  }
  function onSubmit(e) {
    try {
      var f = e.target;
      if (!f || f.tagName !== "FORM" || !f.hasAttribute("data-leadtrack")) return;
      // No preventDefault: the host's submission goes on untouched, and the keepalive fetch
      // survives the navigation (verified in headless Chromium 156, even with a 1 s slow API).
      trackLead(readForm(f), true).catch(function () { /* reported by fail() */ });
    } catch (err) { console.error(P, err); }
  }

  // ---- public API ----
  function init(o) {
    o = o || {};
    if (o.projectId) cfg.projectId = String(o.projectId);
    if (o.endpoint) cfg.endpoint = String(o.endpoint).replace(/\/+$/, "");
    cfg.endpoint = cfg.endpoint || (me && me.src ? new URL(me.src, location.href).origin : location.origin);
    if ("waitForConsent" in o) cfg.waitForConsent = !!o.waitForConsent;
    if ("generateFbp" in o) cfg.generateFbp = !!o.generateFbp;
    if (o.consent) cfg.consent = o.consent;
    if (started) return release(); // a second init updates the config (a consent banner's answer)
    started = true;
    capture();
    d.addEventListener("submit", onSubmit, true); // capture phase on document: later forms work too
    if (d.readyState === "loading") d.addEventListener("DOMContentLoaded", guard(armAll)); else armAll();
    watchForms();
    watchRoutes();
    w.addEventListener("online", guard(flush));
    flush(); // what an earlier page could not send
  }
  function guard(fn) {
    return function () { try { return fn.apply(null, arguments); } catch (e) { console.error(P, e); } };
  }
  w.leadtrack = { version: "1.1.0", init: guard(init), trackLead: function (o) { return trackLead(o); },
    attribution: guard(attribution), channelFlow: guard(readFlow), consent: guard(consent),
    outbox: guard(function () { return Object.keys(outbox()); }) };

  // Auto-init from the tag's data-project-id / data-endpoint (default: the script's origin).
  if (me && me.getAttribute("data-project-id")) {
    w.leadtrack.init({ projectId: me.getAttribute("data-project-id"), endpoint: me.getAttribute("data-endpoint"),
      waitForConsent: me.hasAttribute("data-wait-for-consent") });
  }
})(window, document);
