// The report's sections as tabs, so the page stays short: the leaderboard is always shown, the
// other sections one at a time (the first by default). A nav link (#ID) picks a section; a
// viewer hash (#run=...&task=..., ep=, view=trajectory) picks the trajectory viewer.
(function () {
  'use strict';
  var ALWAYS = 'leaderboard';
  var sections = Array.prototype.filter.call(document.querySelectorAll('main > section'),
    function (s) { return s.id !== ALWAYS; });
  if (!sections.length) return;
  var current = null;
  function show(id) {
    current = id;
    sections.forEach(function (s) { s.classList.toggle('tab-hidden', s.id !== id); });
    Array.prototype.forEach.call(document.querySelectorAll('nav a'), function (a) {
      a.classList.toggle('active', a.getAttribute('href') === '#' + id);
    });
    document.documentElement.setAttribute('data-tab', id);
  }
  function fromHash() {
    var hash = location.hash.replace(/^#/, '');
    var named = sections.filter(function (s) { return s.id === hash; })[0];
    if (named) return named.id;
    if (/(^|&)(task|ep|view)=/.test(hash) && document.getElementById('viewer')) return 'viewer';
    return current || sections[0].id;
  }
  window.addEventListener('hashchange', function () { show(fromHash()); });
  show(fromHash());
})();
