// skillrag review: select a passage in a shown article and the "Add evidence" form gets its article
// and its character offsets in the stored text. Only a convenience: the form works without it (type
// the offsets, or paste the passage). Every run of article text on the page carries data-s, its start
// offset in the stored text, and its text is exactly that slice of it (skillrag.review.markdown).
(function () {
  "use strict";
  var form = document.getElementById("evidence-form");
  if (!form) { return; }

  // The offset in the stored text of a boundary (node, offset) of a selection, or null.
  function runOf(node) {
    var el = node.nodeType === Node.TEXT_NODE ? node.parentElement : node;
    return el && el.closest ? el.closest("[data-s]") : null;
  }
  function boundary(node, offset, isEnd, article) {
    if (node.nodeType === Node.TEXT_NODE) {
      var run = runOf(node);
      if (run && article.contains(run)) { return Number(run.dataset.s) + offset; }
    }
    // anywhere else (an element boundary, a back-link): the first run starting at or after it (start),
    // the last run ending at or before it (end)
    var at = document.createRange();
    at.setStart(node, offset);
    at.collapse(true);
    var all = article.querySelectorAll("[data-s]");
    var found = null;
    for (var i = 0; i < all.length; i++) {
      var r = all[i];
      if (!isEnd && at.comparePoint(r, 0) >= 0) { return Number(r.dataset.s); }
      if (isEnd && at.comparePoint(r, r.childNodes.length) <= 0) { found = r; }
    }
    return isEnd && found ? Number(found.dataset.s) + found.textContent.length : null;
  }

  function onSelect() {
    var sel = window.getSelection();
    if (!sel || sel.isCollapsed || !sel.rangeCount) { return; }
    var range = sel.getRangeAt(0);
    var anchor = range.commonAncestorContainer;
    var article = (anchor.nodeType === Node.TEXT_NODE ? anchor.parentElement : anchor).closest("[data-article]");
    if (!article || form.contains(anchor)) { return; }
    var start = boundary(range.startContainer, range.startOffset, false, article);
    var end = boundary(range.endContainer, range.endOffset, true, article);
    var text = sel.toString();
    form.elements.article.value = article.dataset.article;
    if (start !== null && end !== null && end > start) {
      form.elements.start.value = String(start);
      form.elements.end.value = String(end);
      form.elements.passage.value = "";
    } else {
      form.elements.start.value = "";
      form.elements.end.value = "";
      form.elements.passage.value = text;
    }
    var shown = document.getElementById("evidence-selection");
    if (shown) {
      shown.textContent = "Selected in " + article.dataset.article +
        (start !== null && end !== null && end > start ? " (characters " + start + "–" + end + ")" : "") +
        ": " + (text.length > 160 ? text.slice(0, 157) + "…" : text);
    }
    var details = document.getElementById("add-evidence");
    if (details) { details.open = true; }
  }

  document.addEventListener("mouseup", function () { window.setTimeout(onSelect, 0); });
  document.addEventListener("keyup", function (e) { if (e.shiftKey) { onSelect(); } });
})();
