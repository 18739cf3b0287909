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

  if (typeof document$ !== "undefined") document$.subscribe(fixSwitcher);
  else fixSwitcher();
})();
