// GPU Advisor site script (self-hosted, no dependencies). Runs once per full page load;
// material's instant navigation swaps the page content and emits on `document$` per page.
(function () {
  "use strict";
  var LANGS = { az: "", en: "en/" }; // language -> folder under the site root
  var cfg = JSON.parse(document.getElementById("__config").textContent);
  var firstLang = document.documentElement.lang === "en" ? "en" : "az";
  var siteRoot = new URL(LANGS[firstLang] ? ".." : ".", new URL(cfg.base, location.href));
  function rootOf(l) { return new URL(LANGS[l], siteRoot).href; }
  function langOf(href) { return href.startsWith(rootOf("en")) ? "en" : "az"; }
  function samePageIn(l) { // the current page's path in language l
    var here = location.href.split("#")[0], from = rootOf(langOf(here));
    return rootOf(l) + (here.startsWith(from) ? here.slice(from.length) : "");
  }

  // The language switcher keeps the reader on the same page. A switch is a full page load
  // (not an instant navigation), so the header, search and <html lang> are the new language's.
  function fixSwitcher() {
    document.querySelectorAll("a.md-select__link[hreflang]").forEach(function (a) {
      var l = a.getAttribute("hreflang");
      if (l in LANGS) a.href = samePageIn(l);
    });
  }
  window.addEventListener("click", function (ev) {
    var a = ev.target instanceof Element && ev.target.closest("a.md-select__link[hreflang]");
    if (!a || !(a.getAttribute("hreflang") in LANGS)) return;
    a.href = samePageIn(a.getAttribute("hreflang"));
    ev.stopPropagation(); // keep material's instant navigation out of it; the browser follows href
  }, true);

  // Search: one index holds both languages; show only this page's language.
  function filterResults(list) {
    var lang = langOf(location.href);
    list.querySelectorAll("li.md-search-result__item").forEach(function (li) {
      var a = li.querySelector("a[href]");
      if (a && langOf(a.href) !== lang) li.hidden = true;
    });
  }
  var list = document.querySelector(".md-search-result__list");
  if (list) {
    new MutationObserver(function () { filterResults(list); }).observe(list, { childList: true });
  }

  // Wide tables (issue 39): a scroller that hides columns to its right fades at that edge
  // (site.css `[data-more]`) and says so under it, in the page's language; the first column
  // stays in view (site.css, sticky). Checked on every page view, resize and calculator update.
  // The hint's text is the page's own (overrides/main.html, templates/i18n `theme.scroll_hint`).
  function hintText() {
    var t = document.getElementById("x-scroll-hint-text");
    return t ? t.content.textContent.trim() : "";
  }
  var SCROLLERS = ".md-typeset__scrollwrap, .calc-result, .ar table.ar-t";
  function markScroller(el) {
    var wide = el.scrollWidth > el.clientWidth + 2;
    el.setAttribute("data-more", wide && el.scrollLeft + el.clientWidth < el.scrollWidth - 2 ? "1" : "0");
    var hint = el.nextElementSibling;
    if (!(hint && hint.classList.contains("x-scroll-hint"))) {
      if (!wide || !hintText()) return;
      hint = document.createElement("p");
      hint.className = "x-scroll-hint";
      hint.textContent = hintText();
      el.after(hint);
    }
    hint.hidden = !wide;
  }
  function markAll() { document.querySelectorAll(SCROLLERS).forEach(markScroller); }
  document.addEventListener("scroll", function (ev) {
    var el = ev.target;
    if (el instanceof Element && el.matches(SCROLLERS)) markScroller(el);
  }, true);
  window.addEventListener("resize", markAll);
  document.addEventListener("calc:updated", markAll);
  document.addEventListener("calc:settled", markAll);
  new MutationObserver(function (m) {
    if (m.some(function (r) { return r.target.id === "ar-output"; })) markAll();
  }).observe(document.body, { childList: true, subtree: true });

  // Material wraps the tables in their scrollers on the same emission: look after it has
  function onPage() { fixSwitcher(); markAll(); requestAnimationFrame(markAll); setTimeout(markAll, 400); }
  if (typeof document$ !== "undefined") document$.subscribe(onPage);
  else onPage();
})();
