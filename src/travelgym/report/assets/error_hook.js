// Runs first, in <head>: records script errors, rejected promises, console.error and failed
// resource loads into <pre id="console-errors"> and the data-errors attribute of <html>, so a
// headless browser's DOM dump shows them.
(function () {
  var errors = [];
  window.__reportErrors = errors;
  function show() {
    var box = document.getElementById('console-errors');
    if (box) { box.textContent = errors.join('\n'); box.hidden = errors.length === 0; }
    document.documentElement.setAttribute('data-errors', String(errors.length));
  }
  function record(kind, message) { errors.push(kind + ': ' + message); show(); }
  window.addEventListener('error', function (ev) {
    if (ev.target && ev.target !== window && ev.target.tagName) {
      record('resource', ev.target.tagName.toLowerCase() + ' failed to load');
      return;
    }
    record('error', (ev.message || String(ev.error)) +
      (ev.filename ? ' (' + ev.filename.slice(-60) + ':' + ev.lineno + ')' : ''));
  }, true);
  window.addEventListener('unhandledrejection', function (ev) {
    record('unhandledrejection', String(ev.reason));
  });
  var original = console.error;
  console.error = function () {
    record('console.error', Array.prototype.map.call(arguments, String).join(' '));
    return original.apply(console, arguments);
  };
  document.documentElement.setAttribute('data-errors', '0');
  document.addEventListener('DOMContentLoaded', show);
})();
