/* What the explorer and the label view share: building elements, and reading a comparison's text chunks. The
   data files beside a page are scripts (a browser runs scripts from file://, so no server is needed); each
   chunk hands its rows to vibeExplorer.chunk gzipped in base64, and the browser inflates them with its own
   DecompressionStream. */
(function () {
  "use strict";

  // an element with attributes (text: its text, set as text; cls: its class) and children
  function el(tag, attrs, children) {
    var node = document.createElement(tag);
    Object.keys(attrs || {}).forEach(function (key) {
      if (key === "text") node.textContent = attrs[key];
      else if (key === "cls") node.className = attrs[key];
      else node.setAttribute(key, attrs[key]);
    });
    (children || []).forEach(function (child) { if (child) node.appendChild(child); });
    return node;
  }

  function inflate(text) {
    var bytes = Uint8Array.from(atob(text), function (c) { return c.charCodeAt(0); });
    var stream = new Blob([bytes]).stream().pipeThrough(new DecompressionStream("gzip"));
    return new Response(stream).text().then(JSON.parse);
  }

  // loadChunk(n): chunk n's rows, its script added to the page once. `chunks` is where the page's
  // vibeExplorer.chunk puts what each script hands over; `base()` the folder of the data files.
  function loader(base, chunks) {
    var waiting = {};
    return function loadChunk(n) {
      if (chunks[n] && !chunks[n].then) return Promise.resolve(chunks[n]);
      if (!waiting[n]) {
        waiting[n] = new Promise(function (resolve, reject) {
          var script = document.createElement("script");
          script.src = base() + "chunk-" + n + ".js";
          script.charset = "utf-8";
          script.onload = function () {
            Promise.resolve(chunks[n]).then(function (rows) { chunks[n] = rows; resolve(rows); }, reject);
          };
          script.onerror = function () { reject(new Error("could not read " + script.src)); };
          document.head.appendChild(script);
        });
      }
      return waiting[n];
    };
  }

  window.vibePairData = {el: el, inflate: inflate, loader: loader};
})();
