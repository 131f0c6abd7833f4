// passkey.js: the one script of the bot's pages, served by the bot itself
// (a content security policy of script-src 'self'). It does two things:
//
// Enrolment: a form with data-passkey-enrol="URL" (the enrolment page's)
// asks URL for creation options (a POST of the form's "check" field),
// calls navigator.credentials.create, puts the reference in the field
// "ref" and the new credential's JSON in "credential", and submits.
//
// Approval: approveWithPasskey(form) asks the bot for an approval's
// request options (a POST of the form's data-passkey-binding to
// data-passkey-options, by default "options" beside this script), calls
// navigator.credentials.get, puts the reference in the field
// "passkey_ref" and the assertion's JSON in "passkey_assertion"
// (creating both as hidden inputs when missing), and submits the form.
// A form with data-passkey-binding calls it by itself on submit, unless
// the submitting button has data-passkey-skip (a Deny beside the
// Approve). What went wrong is shown in the form's [data-passkey-status]
// element (made when missing); nothing is submitted then.
(function () {
  "use strict";

  var here = document.currentScript ? document.currentScript.src : location.href;

  function toBytes(s) {
    s = s.replace(/-/g, "+").replace(/_/g, "/");
    while (s.length % 4) s += "=";
    var bin = atob(s), out = new Uint8Array(bin.length);
    for (var i = 0; i < bin.length; i++) out[i] = bin.charCodeAt(i);
    return out.buffer;
  }

  function toText(buf) {
    if (!buf) return null;
    var bytes = new Uint8Array(buf), bin = "";
    for (var i = 0; i < bytes.length; i++) bin += String.fromCharCode(bytes[i]);
    return btoa(bin).replace(/\+/g, "-").replace(/\//g, "_").replace(/=+$/, "");
  }

  function withIDs(list) {
    return (list || []).map(function (d) {
      var c = Object.assign({}, d);
      c.id = toBytes(d.id);
      return c;
    });
  }

  function creationOptions(o) {
    var p = Object.assign({}, o);
    p.challenge = toBytes(o.challenge);
    p.user = Object.assign({}, o.user, { id: toBytes(o.user.id) });
    p.excludeCredentials = withIDs(o.excludeCredentials);
    return p;
  }

  function requestOptions(o) {
    var p = Object.assign({}, o);
    p.challenge = toBytes(o.challenge);
    p.allowCredentials = withIDs(o.allowCredentials);
    return p;
  }

  function credentialJSON(cred) {
    var r = cred.response, out = {
      id: cred.id,
      rawId: toText(cred.rawId),
      type: cred.type,
      authenticatorAttachment: cred.authenticatorAttachment || undefined,
      clientExtensionResults: cred.getClientExtensionResults ? cred.getClientExtensionResults() : {},
      response: { clientDataJSON: toText(r.clientDataJSON) }
    };
    if (r.attestationObject) {
      out.response.attestationObject = toText(r.attestationObject);
      if (r.getTransports) out.response.transports = r.getTransports();
    } else {
      out.response.authenticatorData = toText(r.authenticatorData);
      out.response.signature = toText(r.signature);
      if (r.userHandle) out.response.userHandle = toText(r.userHandle);
    }
    return JSON.stringify(out);
  }

  function post(url, fields) {
    return fetch(url, {
      method: "POST",
      credentials: "same-origin",
      headers: { "Content-Type": "application/x-www-form-urlencoded" },
      body: new URLSearchParams(fields).toString()
    }).then(function (res) {
      return res.json().catch(function () { return {}; }).then(function (body) {
        if (!res.ok) throw new Error(body.error || "The bot did not answer (" + res.status + "): try again.");
        return body;
      });
    });
  }

  function field(form, name) {
    var el = form.querySelector('input[name="' + name + '"]');
    if (!el) {
      el = document.createElement("input");
      el.type = "hidden";
      el.name = name;
      form.appendChild(el);
    }
    return el;
  }

  function status(form, msg) {
    var el = form.querySelector("[data-passkey-status]");
    if (!el) {
      el = document.createElement("p");
      el.setAttribute("data-passkey-status", "");
      el.setAttribute("role", "status");
      form.appendChild(el);
    }
    el.textContent = msg;
  }

  function why(err) {
    if (err && err.name === "NotAllowedError") return "The passkey was not given (cancelled, or it timed out): try again.";
    if (err && err.name === "InvalidStateError") return "This device's passkey is enrolled already.";
    if (err && err.name === "SecurityError") return "The browser refused: this page's address is not the bot's own.";
    return (err && err.message) || "Something went wrong: try again.";
  }

  function send(form, submitter) {
    form.dataset.passkeyDone = "1";
    if (form.requestSubmit) form.requestSubmit(submitter || undefined);
    else form.submit();
  }

  function busy(form, on) {
    if (on) form.dataset.passkeyBusy = "1";
    else delete form.dataset.passkeyBusy;
  }

  function noWebAuthn(form) {
    if (window.PublicKeyCredential && navigator.credentials) return false;
    status(form, "This browser cannot use passkeys.");
    return true;
  }

  // approveWithPasskey asks for the approval's passkey and submits form
  // with it; it returns a promise that settles when the form is sent or
  // refused.
  function approveWithPasskey(form, submitter) {
    if (noWebAuthn(form) || form.dataset.passkeyBusy) return Promise.resolve(false);
    busy(form, true);
    status(form, "Asking for your passkey…");
    var url = form.dataset.passkeyOptions || new URL("options", here).href;
    return post(url, { binding: form.dataset.passkeyBinding || "" }).then(function (req) {
      return navigator.credentials.get({ publicKey: requestOptions(req.options.publicKey) }).then(function (cred) {
        field(form, "passkey_ref").value = req.ref;
        field(form, "passkey_assertion").value = credentialJSON(cred);
        status(form, "Sending…");
        busy(form, false);
        send(form, submitter);
        return true;
      });
    }).catch(function (err) {
      busy(form, false);
      status(form, why(err));
      return false;
    });
  }

  function enrolPasskey(form, submitter) {
    if (noWebAuthn(form) || form.dataset.passkeyBusy) return Promise.resolve(false);
    busy(form, true);
    status(form, "Asking your device for a new passkey…");
    return post(form.dataset.passkeyEnrol, { check: field(form, "check").value }).then(function (req) {
      return navigator.credentials.create({ publicKey: creationOptions(req.options.publicKey) }).then(function (cred) {
        field(form, "ref").value = req.ref;
        field(form, "credential").value = credentialJSON(cred);
        status(form, "Saving…");
        busy(form, false);
        send(form, submitter);
        return true;
      });
    }).catch(function (err) {
      busy(form, false);
      status(form, why(err));
      return false;
    });
  }

  document.addEventListener("submit", function (ev) {
    var form = ev.target;
    if (!(form instanceof HTMLFormElement)) return;
    var enrol = form.hasAttribute("data-passkey-enrol"), approve = form.hasAttribute("data-passkey-binding");
    if (!enrol && !approve) return;
    if (form.dataset.passkeyDone) {
      delete form.dataset.passkeyDone;
      return;
    }
    var submitter = ev.submitter || null;
    if (approve && submitter && submitter.hasAttribute("data-passkey-skip")) return;
    ev.preventDefault();
    if (enrol) enrolPasskey(form, submitter);
    else approveWithPasskey(form, submitter);
  });

  window.approveWithPasskey = approveWithPasskey;
})();
