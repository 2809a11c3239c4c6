// Zoom for the blocker graph: scales the SVG's width and height (its viewBox keeps the
// drawing); the viewport scrolls. Without JavaScript the graph shows at its natural size.
(function () {
  for (const figure of document.querySelectorAll("figure.zoomable")) {
    const svg = figure.querySelector("svg");
    const controls = figure.querySelector(".zoom-controls");
    if (!svg || !controls) continue;
    const width = Number(svg.getAttribute("width"));
    const height = Number(svg.getAttribute("height"));
    let zoom = 1;
    const apply = () => {
      svg.setAttribute("width", String(Math.round(width * zoom)));
      svg.setAttribute("height", String(Math.round(height * zoom)));
      figure.dataset.zoom = zoom.toFixed(2);
    };
    controls.hidden = false;
    controls.addEventListener("click", (event) => {
      const button = event.target.closest("button");
      if (!button) return;
      if (button.hasAttribute("data-zoom-reset")) zoom = 1;
      else zoom = Math.min(4, Math.max(0.25, zoom * Number(button.dataset.zoomBy)));
      apply();
    });
  }
})();
