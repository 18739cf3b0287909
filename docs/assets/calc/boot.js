// Calculator pages, inlined into <head> by hooks/pyodide_assets.py, so it runs before anything
// else on the page:
// 1. It starts the calculators' Pyodide worker (worker.mjs) now, instead of when calc.mjs runs
//    after the whole page has been parsed (about 0.2-0.3 s later on a small machine). Messages
//    that arrive before calc.mjs takes the worker over wait in `__calcBoot.messages`.
// 2. It holds Material's search worker back until the reader reaches for search (focus on the
//    search field, its hotkeys, the search button) or the calculators have been ready for a few
//    seconds. Building the search index costs about 0.4 s of CPU, which on a 2-core machine
//    slowed the calculators' start. Messages for it are queued and delivered in order.
(function () {
  if (window.__calcBoot) return; // once per document (instant navigation may bring a copy)
  var base = document.currentScript.dataset.base;
  var boot = (window.__calcBoot = { worker: null, messages: [], error: null });
  try {
    // the worker chooses snapshot or plain start (worker.mjs); it cannot see the pointer
    var coarse = window.matchMedia && window.matchMedia("(pointer: coarse)").matches ? "1" : "0";
    var forced = new URLSearchParams(location.search).get("calc-start");
    var snap = "0";
    try {
      snap = localStorage.getItem("calc.snapshot") ? "1" : "0";
    } catch (e) {}
    var q = "?coarse=" + coarse + "&snap=" + snap + (forced ? "&start=" + encodeURIComponent(forced) : "");
    boot.worker = new Worker(base + "assets/calc/worker.mjs" + q, { type: "module" });
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
  function release() {
    if (released) return;
    released = true;
    window.Worker = Native;
    held.forEach(function (h) {
      h.start();
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
