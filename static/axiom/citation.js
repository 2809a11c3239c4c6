// The citation page scrolls the cited span into view (a file, not inline: the CSP runs no inline script).
document.addEventListener("DOMContentLoaded", () => {
  const cited = document.getElementById("cited");
  if (cited) cited.scrollIntoView({block: "center"});
});
