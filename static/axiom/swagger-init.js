// Starts Swagger UI on /api/docs from the settings the page embeds as JSON
// (an external file rather than an inline script, so a strict CSP can allow it).
(function () {
  "use strict";
  const settings = JSON.parse(document.getElementById("swagger-settings").textContent);
  settings.dom_id = "#swagger-ui";
  settings.presets = [window.SwaggerUIBundle.presets.apis];
  const csrfToken = document.body.dataset.csrfToken;
  if (csrfToken) {
    settings.requestInterceptor = function (request) {
      request.headers["X-CSRFToken"] = csrfToken;
      return request;
    };
  }
  window.ui = window.SwaggerUIBundle(settings);
})();
