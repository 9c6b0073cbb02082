// Live character count of the admin descriptions (the only script of the
// web interface; every page works without it). A textarea with
// data-count="ID" updates the element ID with its length in characters.
"use strict";
document.addEventListener("DOMContentLoaded", function () {
  document.querySelectorAll("textarea[data-count]").forEach(function (area) {
    var out = document.getElementById(area.getAttribute("data-count"));
    if (!out) { return; }
    var update = function () { out.textContent = String(Array.from(area.value).length); };
    area.addEventListener("input", update);
    update();
  });
});
