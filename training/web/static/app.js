// Keys and autoplay for domino serve; every page works without this file.
"use strict";
document.addEventListener("keydown", function (event) {
  if (event.altKey || event.ctrlKey || event.metaKey) return;
  var target = event.target;
  if (target && (target.tagName === "INPUT" || target.tagName === "SELECT" || target.tagName === "TEXTAREA")) return;
  if (/^[1-9]$/.test(event.key)) {
    var moves = document.querySelectorAll("button.move");
    var k = parseInt(event.key, 10) - 1;
    if (k < moves.length) { event.preventDefault(); moves[k].click(); }
  } else if (event.key === "h") {
    var hint = document.getElementById("hint");
    if (hint) { event.preventDefault(); hint.click(); }
  }
});
document.addEventListener("DOMContentLoaded", function () {
  var on = document.getElementById("autoplay-on");
  var form = document.getElementById("step-form");
  if (on && form) {
    window.setTimeout(function () { form.submit(); }, parseInt(on.getAttribute("data-delay") || "700", 10));
  }
  // the table picture's own hand tiles (domino_envs/svg.py marks them g.hand[data-tile]) play like the
  // hand's buttons: a click is the matching button's click, so the form and its checks are the same
  var table = document.getElementById("table-svg");
  if (table) {
    table.querySelectorAll("g.hand[data-tile]").forEach(function (tile) {
      var button = document.querySelector("#hand button.tile.playable[data-tile='" + tile.getAttribute("data-tile") + "']");
      if (!button) return;
      tile.classList.add("playable");
      tile.addEventListener("click", function () { button.click(); });
    });
  }
  var slider = document.getElementById("slider");
  if (slider && slider.form) {
    slider.addEventListener("change", function () { slider.form.submit(); });
  }
});
