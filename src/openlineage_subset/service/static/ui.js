// ol-subset lineage serve: the web UI's one script. Everything works without it (forms and
// links, the report's size choices for a graph); it only filters the dataset list as you type,
// opens a partition on one click, zooms and pans a run graph (wheel, drag, buttons; it opens
// fitted to its frame, and a click on a box follows its link), and copies a backfill plan. No framework, nothing fetched from elsewhere, no inline style.
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

  // Run graphs: the mouse wheel zooms around the pointer, dragging pans, and buttons (or +, -,
  // 0 and the arrow keys on the focused drawing) zoom in, out and back to actual size. The
  // drawing fills its frame; what it shows is its viewBox: VIEW.scale screen pixels a unit.
  var LIMITS = { least: 0.05, most: 8 };
  document.querySelectorAll("div.graph").forEach(function (frame) {
    var svg = frame.querySelector("svg.run-graph");
    if (!svg || !svg.viewBox || !svg.viewBox.baseVal) { return; }
    var full = { width: svg.viewBox.baseVal.width, height: svg.viewBox.baseVal.height };
    var natural = full.height;
    var view = { x: 0, y: 0, scale: 1 };
    var sizes = frame.previousElementSibling;
    if (sizes && sizes.classList.contains("zoom")) {
      var actual = sizes.querySelector("input.full");
      if (actual) { actual.checked = true; }  // the script sizes the drawing itself
      sizes.hidden = true;  // the CSS size choices, for pages without a script
    }
    var bar = document.createElement("p");
    bar.className = "pan-zoom";
    var shown = document.createElement("output");
    var button = function (label, name, act) {
      var made = document.createElement("button");
      made.type = "button";
      made.textContent = label;
      made.setAttribute("aria-label", name);
      made.title = name;
      made.addEventListener("click", act);
      bar.appendChild(made);
      return made;
    };
    var centre = function (factor) {
      var box = svg.getBoundingClientRect();
      zoomAt(factor, box.width / 2, box.height / 2);
    };
    button("+", "zoom in", function () { centre(1.25); });
    button("\u2212", "zoom out", function () { centre(0.8); });
    button("Fit", "fit the whole graph", function () { fit(false); });
    button("Reset", "actual size, from the top left", function () { reset(); });
    bar.appendChild(shown);
    var help = document.createElement("span");
    help.className = "note";
    help.textContent = " wheel: zoom at the pointer; drag: pan; hover over a box or an edge " +
      "for its full names";
    bar.appendChild(help);
    frame.parentNode.insertBefore(bar, frame);
    frame.classList.add("panzoom");
    svg.setAttribute("tabindex", "0");
    svg.setAttribute("preserveAspectRatio", "xMinYMin meet");
    svg.setAttribute("width", "100%");
    var draw = function () {
      var height = Math.round(Math.min(natural, Math.max(160, window.innerHeight * 0.75)));
      svg.setAttribute("height", String(height));
      var box = svg.getBoundingClientRect();
      var wide = Math.max(box.width, 1) / view.scale;
      var high = Math.max(box.height, 1) / view.scale;
      svg.setAttribute("viewBox", [view.x, view.y, wide, high].join(" "));
      frame.setAttribute("data-scale", view.scale.toFixed(4));
      shown.textContent = Math.round(view.scale * 100) + "%";
    };
    var zoomAt = function (factor, left, top) {
      // left, top: screen pixels from the drawing's corner; that point stays where it is.
      var scale = Math.min(LIMITS.most, Math.max(LIMITS.least, view.scale * factor));
      view.x += left / view.scale - left / scale;
      view.y += top / view.scale - top / scale;
      view.scale = scale;
      draw();
    };
    var reset = function () {
      view = { x: 0, y: 0, scale: 1 };
      draw();
    };
    var fit = function (shrinkOnly) {
      var box = svg.getBoundingClientRect();
      var whole = Math.min(box.width / full.width, box.height / full.height);
      if (shrinkOnly) { whole = Math.min(1, whole); }
      view = { x: 0, y: 0, scale: Math.min(LIMITS.most, Math.max(LIMITS.least, whole)) };
      draw();
    };
    var pan = function (right, down) {
      view.x -= right / view.scale;
      view.y -= down / view.scale;
      draw();
    };
    svg.addEventListener("wheel", function (event) {
      event.preventDefault();
      var box = svg.getBoundingClientRect();
      var delta = event.deltaMode === 1 ? event.deltaY * 16 : event.deltaY;
      zoomAt(Math.exp(-delta * 0.0015), event.clientX - box.left, event.clientY - box.top);
    }, { passive: false });
    // A press becomes a drag once it moves a few pixels: a click on a box stays a click on
    // its link (capturing the pointer at once would send the click to the drawing instead).
    var drag = null;
    var dragged = false;
    svg.addEventListener("pointerdown", function (event) {
      if (event.button !== 0) { return; }
      drag = { x: event.clientX, y: event.clientY, id: event.pointerId, moving: false };
      dragged = false;
    });
    svg.addEventListener("pointermove", function (event) {
      if (!drag || event.pointerId !== drag.id) { return; }
      if (!drag.moving) {
        if (Math.abs(event.clientX - drag.x) + Math.abs(event.clientY - drag.y) < 4) { return; }
        drag.moving = true;
        dragged = true;
        svg.setPointerCapture(event.pointerId);
        frame.classList.add("dragging");
      }
      pan(event.clientX - drag.x, event.clientY - drag.y);
      drag.x = event.clientX;
      drag.y = event.clientY;
    });
    svg.addEventListener("click", function (event) {
      if (dragged) { event.preventDefault(); dragged = false; }  // a pan, not a click
    }, true);
    svg.addEventListener("dragstart", function (event) { event.preventDefault(); });
    var stop = function () {
      drag = null;
      frame.classList.remove("dragging");
    };
    svg.addEventListener("pointerup", stop);
    svg.addEventListener("pointercancel", stop);
    var keys = {
      "+": function () { centre(1.25); },
      "=": function () { centre(1.25); },
      "-": function () { centre(0.8); },
      "0": reset,
      "ArrowLeft": function () { pan(40, 0); },
      "ArrowRight": function () { pan(-40, 0); },
      "ArrowUp": function () { pan(0, 40); },
      "ArrowDown": function () { pan(0, -40); }
    };
    svg.addEventListener("keydown", function (event) {
      var act = keys[event.key];
      if (!act || event.ctrlKey || event.metaKey || event.altKey) { return; }
      event.preventDefault();
      act();
    });
    window.addEventListener("resize", draw);
    draw();
    fit(true);  // opens whole: shrunk to its frame when larger, never cut off on the right
  });

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
