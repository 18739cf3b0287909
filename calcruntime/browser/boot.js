// Calculator pages, inlined into <head> by calcruntime/build, so it runs before anything
// else on the page:
// 1. It starts the calculators' Pyodide worker (worker.mjs) now, instead of when calc.mjs runs
//    after the whole page has been parsed (about 0.2-0.3 s later on a small machine). Messages
//    that arrive before calc.mjs takes the worker over wait in `__calcBoot.messages`.
// 2. It holds Material's search worker back until the reader reaches for search (focus on the
//    search field, its hotkeys, the search button) or the calculators have been ready for a few
//    seconds. Building the search index costs about 0.4 s of CPU, which on a 2-core machine
//    slowed the calculators' start. Messages for it are queued and delivered in order; the
//    request for the search index waits likewise.
// 3. On a phone's first visit it fetches the runtime's largest files at once (below).
(function () {
  if (window.__calcBoot) return; // once per document (instant navigation may bring a copy)
  var base = document.currentScript.dataset.base;
  var boot = (window.__calcBoot = { worker: null, messages: [], error: null });
  try {
    // the worker chooses snapshot or plain start (worker.mjs); it cannot see the pointer
    var coarse = window.matchMedia && window.matchMedia("(pointer: coarse)").matches ? "1" : "0";
    var forced = new URLSearchParams(location.search).get("calc-start");
    var snap = "0";
    var zbr = null; // what a worker found for zip-encoding.zip (worker.mjs zipURL), if noted
    try {
      snap = localStorage.getItem("calc.snapshot") ? "1" : "0";
      zbr = localStorage.getItem("calc.zipbr");
    } catch (e) {}
    // the hints travel in the worker's name, not its address: one address is one HTTP cache
    // entry (the page's modulepreload of worker.mjs serves it), where an address with a query
    // was fetched anew, and the worker started 0.15-0.3 s later on a desktop
    var hints =
      "coarse=" + coarse + "&snap=" + snap + (zbr ? "&zbr=" + zbr : "") + (forced ? "&start=" + encodeURIComponent(forced) : "");
    // Fetched into the HTTP cache, read to the end; the worker's own requests for the same
    // files then join these (measured: no byte crosses twice).
    var drain = function (url) {
      return fetch(url)
        .then(function (r) {
          return r.body && r.body.pipeTo(new WritableStream());
        })
        .catch(function () {});
    };
    if (snap === "0" && coarse === "1" && window.WritableStream) {
      // A phone's first visit (it starts plain, worker.mjs): the runtime files, now rather than
      // when the worker asks for them (0.2-0.5 s later on the phone profile). Not on a desktop:
      // there these requests held the worker's own script back (HTTP/1.1 allows 6 connections),
      // and the cold start took 1.12 s instead of 0.96 s (median of 5).
      var dir = base + "assets/pyodide/";
      drain(dir + "pyodide.asm.wasm");
      // the standard library as the worker asks for it (worker.mjs zipURL: brotli-compressed by
      // its own name where the host says so for zip-encoding.zip, else its .gz)
      fetch(dir + "zip-encoding.zip")
        .then(function (r) {
          var br = r.ok && r.headers.get("content-encoding") === "br";
          drain(dir + (br ? "python_stdlib.zip" : "python_stdlib.zip.gz"));
          return r.arrayBuffer();
        })
        .catch(function () {});
      drain(dir + "pyodide.asm.mjs");
    }
    boot.worker = new Worker(base + "assets/calc/worker.mjs", { type: "module", name: hints });
    boot.worker.onmessage = function (e) {
      boot.messages.push(e);
    };
    boot.worker.onerror = function (e) {
      boot.error = e;
    };
  } catch (e) {
    boot.worker = null; // calc.mjs starts it itself
  }

  var Native = window.Worker;
  var held = [];
  var released = false;
  class HeldWorker extends EventTarget {
    constructor(url, options) {
      super();
      this.args = [url, options];
      this.queue = [];
      this.real = null;
      held.push(this);
    }
    postMessage(message, transfer) {
      if (this.real) this.real.postMessage(message, transfer);
      else this.queue.push([message, transfer]);
    }
    terminate() {
      this.dead = true;
      if (this.real) this.real.terminate();
    }
    start() {
      if (this.real || this.dead) return;
      var self = this;
      var w = (this.real = new Native(this.args[0], this.args[1]));
      w.onmessage = function (e) {
        self.dispatchEvent(new MessageEvent("message", { data: e.data }));
      };
      w.onerror = function (e) {
        self.dispatchEvent(new ErrorEvent("error", { message: e.message }));
      };
      this.queue.forEach(function (q) {
        w.postMessage(q[0], q[1]);
      });
      this.queue = [];
    }
  }
  window.Worker = function (url, options) {
    if (!released && String(url).indexOf("/workers/search") >= 0) return new HeldWorker(url, options);
    return new Native(url, options);
  };
  window.Worker.prototype = Native.prototype;
  // The search index too (Material fetches it with XMLHttpRequest): 137 kB that a phone
  // network would otherwise carry while the calculators' runtime downloads.
  var open = XMLHttpRequest.prototype.open;
  var send = XMLHttpRequest.prototype.send;
  var heldRequests = [];
  XMLHttpRequest.prototype.open = function (method, url) {
    this.__calcHeld = !released && String(url).indexOf("/search/search_index.json") >= 0;
    return open.apply(this, arguments);
  };
  XMLHttpRequest.prototype.send = function () {
    if (!this.__calcHeld || released) return send.apply(this, arguments);
    var xhr = this;
    var args = arguments;
    heldRequests.push(function () {
      send.apply(xhr, args);
    });
  };
  function release() {
    if (released) return;
    released = true;
    window.Worker = Native;
    held.forEach(function (h) {
      h.start();
    });
    XMLHttpRequest.prototype.open = open;
    XMLHttpRequest.prototype.send = send;
    heldRequests.forEach(function (go) {
      go();
    });
  }
  var search = function (t) {
    return t && t.closest && t.closest(".md-search, label[for='__search']");
  };
  document.addEventListener("focusin", function (e) {
    if (search(e.target)) release();
  });
  document.addEventListener("pointerdown", function (e) {
    if (search(e.target)) release();
  });
  document.addEventListener("keydown", function (e) {
    if (e.key === "/" || e.key === "s" || e.key === "f" || search(e.target)) release();
  });
  document.addEventListener("change", function (e) {
    if (e.target && e.target.id === "__search") release();
  });
  document.addEventListener("calc:ready", function () {
    setTimeout(release, 3000);
  });
  setTimeout(release, 15000); // the calculators never got ready: search still comes
})();
