// ol-subset lineage serve: the web UI's one script. Everything works without it (forms and
// links); it only filters the dataset list as you type, opens a partition on one click, and
// copies a backfill plan. No framework, nothing fetched from elsewhere.
"use strict";

(function () {
  // The front page: hide the datasets that do not match the search box, as you type.
  var search = document.getElementById("dataset-search");
  if (search) {
    var rows = document.querySelectorAll("tr[data-search]");
    var counter = document.getElementById("dataset-count");
    var filter = function () {
      var words = search.value.toLowerCase().split(/\s+/).filter(Boolean);
      var shown = 0;
      rows.forEach(function (row) {
        var text = row.getAttribute("data-search");
        var match = words.every(function (word) { return text.indexOf(word) !== -1; });
        row.hidden = !match;
        if (match) { shown += 1; }
      });
      if (counter) { counter.textContent = shown + " of " + rows.length + " dataset(s)"; }
    };
    search.addEventListener("input", filter);
    filter();
  }

  // A dataset page: one click on a partition opens its impact (or provenance), unless the
  // mode is "select several" (then the click ticks its box, as without a script).
  var form = document.getElementById("partitions");
  var modes = document.getElementById("modes");
  if (form && modes) {
    modes.hidden = false;
    form.addEventListener("click", function (event) {
      var input = event.target;
      if (!(input instanceof HTMLInputElement) || input.name !== "p") { return; }
      var mode = document.querySelector("input[name=mode]:checked");
      if (!mode || mode.value === "select") { return; }
      event.preventDefault();
      var query = new URLSearchParams();
      query.set("namespace", form.elements.namedItem("namespace").value);
      query.set("name", form.elements.namedItem("name").value);
      query.set("query", mode.value);
      query.append("p", input.value);
      window.location.assign(form.getAttribute("action") + "?" + query.toString());
    });
  }

  // Copy buttons: the text of the element named by data-copy.
  document.querySelectorAll("button.copy").forEach(function (button) {
    button.hidden = false;
    button.addEventListener("click", function () {
      var source = document.getElementById(button.getAttribute("data-copy"));
      if (!source || !navigator.clipboard) { return; }
      navigator.clipboard.writeText(source.textContent).then(function () {
        button.textContent = "Copied";
      }, function () {
        button.textContent = "Copy failed: select the text";
      });
    });
  });
})();
