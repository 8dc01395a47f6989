// The episode viewer's scaffolding, the same for every suite. The page's viewer script is one
// function: 'use strict', dom.js, this file, then the suite's viewer.js, which defines its hooks
// and ends with startViewer(hooks):
//   passes(ep)                   whether the suite's filters (and the Find box) keep ep
//   listEntry(ep)                { title: tooltip, content: nodes } of ep's button in the list
//   renderEpisode(view, ep, run) fills <article id="episode-view"> with ep
//   afterHash(params)            optional: after the URL hash was applied and ep rendered
// Every episode record has id, task and trial. The URL hash is #run=N|LABEL&task=ID&trial=K
// (or ep=ID#K), view=trajectory hides the other sections; the suite may read more parameters.
// When the viewer has rendered, <html> gets data-ready="1" and data-selected (the episode id).
// A run record may carry its episodes' bulky keys packed (run.detail: base64 of gzip JSON, one
// object per episode, report/lazy.py): they are unpacked into the episodes when one of the run
// is opened or a filter is set, so passes() with no filter set and listEntry() must not read them.
var DATA = JSON.parse(document.getElementById('report-data').textContent);
var runs = DATA.runs;
var state = { run: 0, id: null };
var visible = [];
var hooks = null;
var HINT = '';
var initialScrollDone = false;

function badge(text, cls, title) { return el('span', { cls: 'badge ' + cls, text: text, title: title }); }
function taskOf(id) { return id ? id.split('#')[0] : null; }
function trialOf(id) { return id && id.indexOf('#') >= 0 ? Number(id.split('#')[1]) : 0; }
function findEpisode(runIndex, task, trial) {
  var eps = (runs[runIndex] || { episodes: [] }).episodes, first = null;
  for (var i = 0; i < eps.length; i++) {
    if (eps[i].task !== task) continue;
    if (trial === undefined || trial === null || eps[i].trial === trial) return eps[i];
    if (!first) first = eps[i];
  }
  return first;
}
function currentEpisode() {
  var eps = (runs[state.run] || { episodes: [] }).episodes;
  if (!state.id) return null;
  for (var i = 0; i < eps.length; i++) if (eps[i].id === state.id) return eps[i];
  return null;
}

// ----- packed episode details --------------------------------------------------------------
var unpacking = {};  // run index -> promise of its details merged into its episodes
var tablesUnpacked = null;  // promise of DATA.packed's tables set on DATA
function unpacked(runIndex) { var run = runs[runIndex]; return (!run || !run.detail) && !DATA.packed; }
function inflate(base64) {
  if (typeof DecompressionStream === 'undefined') {
    return Promise.reject(new Error('this browser cannot unpack the episodes (it needs ' +
      'DecompressionStream: Chrome 80, Firefox 113, Safari 16.4 or later)'));
  }
  var text = atob(base64), bytes = new Uint8Array(text.length);
  for (var i = 0; i < text.length; i++) bytes[i] = text.charCodeAt(i);
  return new Response(new Blob([bytes]).stream().pipeThrough(new DecompressionStream('gzip'))).json();
}
function unpackTables() {
  if (!tablesUnpacked) {
    var names = Object.keys(DATA.packed || {});
    tablesUnpacked = Promise.all(names.map(function (name) { return inflate(DATA.packed[name]); }))
      .then(function (values) { names.forEach(function (name, i) { DATA[name] = values[i]; }); delete DATA.packed; });
  }
  return tablesUnpacked;
}
function unpack(runIndex) {
  var run = runs[runIndex];
  if (unpacked(runIndex)) return Promise.resolve();
  if (!unpacking[runIndex]) {
    unpacking[runIndex] = Promise.all([unpackTables(), run && run.detail ? inflate(run.detail) : null])
      .then(function (found) {
        if (found[1]) run.episodes.forEach(function (ep, j) { Object.assign(ep, found[1][j]); });
        delete run.detail;
      });
  }
  return unpacking[runIndex];
}
function filtering() {
  if ($('task-filter').value.trim()) return true;
  return Array.prototype.some.call(document.querySelectorAll('#viewer .controls select'), function (box) {
    return box.id !== 'run-select' && box.value;
  });
}
function failed(error) { console.error(String(error && error.message || error)); }

// ----- run select and list -----------------------------------------------------------------
function fillRuns() {
  var select = $('run-select');
  runs.forEach(function (run, i) {
    select.appendChild(el('option', { value: String(i), text: run.label + ' (' + run.episodes.length + ')' }));
  });
  select.addEventListener('change', function () {
    var current = currentEpisode();
    state.run = Number(select.value);
    var same = current && findEpisode(state.run, current.task, current.trial);
    state.id = same ? same.id : null;
    renderList(); renderView(); writeHash();
  });
}
function renderList() {
  var list = $('episode-list');
  if (filtering() && !unpacked(state.run)) {  // the filters may read the packed details
    $('list-count').textContent = 'unpacking the episodes\u2026';
    return unpack(state.run).then(renderList, failed);
  }
  list.textContent = '';
  var run = runs[state.run];
  visible = run ? run.episodes.filter(function (ep) { return hooks.passes(ep); }) : [];
  visible.forEach(function (ep) {
    var entry = hooks.listEntry(ep);
    list.appendChild(el('li', { 'data-id': ep.id, cls: ep.id === state.id ? 'selected' : '' },
      el('button', { type: 'button', title: entry.title, on: { click: function () { select(ep.id); } } },
        entry.content)));
  });
  $('list-count').textContent = visible.length + ' of ' + (run ? run.episodes.length : 0) + ' episodes';
  return Promise.resolve();
}
function select(id) {
  state.id = id;
  Array.prototype.forEach.call($('episode-list').children, function (li) {
    li.className = li.getAttribute('data-id') === id ? 'selected' : '';
  });
  renderView(); writeHash();
}
function showEpisode(runIndex, id) {
  state.run = runIndex;
  $('run-select').value = String(runIndex);
  state.id = id;
  renderList(); renderView(); writeHash();
}
function renderView() {
  var view = $('episode-view');
  view.textContent = '';
  var ep = currentEpisode();
  document.documentElement.setAttribute('data-selected', ep ? ep.id : '');
  if (!ep) {
    view.removeAttribute('data-episode');
    add(view, el('p', { cls: 'hint', text: HINT }));
    return Promise.resolve();
  }
  if (!unpacked(state.run)) {
    add(view, el('p', { cls: 'hint', text: 'unpacking the episodes\u2026' }));
    return unpack(state.run).then(renderView, failed);
  }
  view.setAttribute('data-episode', ep.id);
  hooks.renderEpisode(view, ep, runs[state.run]);
  return Promise.resolve();
}

// ----- the URL hash --------------------------------------------------------------------------
function readHash() {
  var params = {};
  location.hash.replace(/^#/, '').split('&').forEach(function (pair) {
    if (!pair) return;
    var i = pair.indexOf('=');
    var key = i < 0 ? pair : pair.slice(0, i);
    var value = i < 0 ? '' : pair.slice(i + 1);
    try { params[decodeURIComponent(key)] = decodeURIComponent(value.replace(/\+/g, ' ')); } catch (e) { /* a bad escape */ }
  });
  return params;
}
function applyHash() {
  var p = readHash();
  if (p.run !== undefined) {
    var index = /^\d+$/.test(p.run) ? Number(p.run) : runs.map(function (r) { return r.label; }).indexOf(p.run);
    if (index >= 0 && index < runs.length) state.run = index;
  }
  $('run-select').value = String(state.run);
  var task = p.task || taskOf(p.ep);
  if (task) {
    var trial = p.trial !== undefined ? Number(p.trial) : (p.ep ? trialOf(p.ep) : null);
    var ep = findEpisode(state.run, task, trial);
    state.id = ep ? ep.id : null;
  }
  var only = p.view === 'trajectory';
  document.body.classList.toggle('only-viewer', only);
  return Promise.all([renderList(), renderView()]).then(function () {
    if (hooks.afterHash) hooks.afterHash(p);
    var list = $('episode-list'), chosen = list.querySelector('li.selected');
    if (chosen) {  // scroll the list only (not the window) to the chosen episode
      list.scrollTop += chosen.getBoundingClientRect().top - list.getBoundingClientRect().top - list.clientHeight / 3;
    }
    if (task && !only && !initialScrollDone) { initialScrollDone = true; window.scrollTo(0, $('viewer').offsetTop); }
  });
}
function writeHash() {
  var ep = currentEpisode();
  var hash = '#run=' + state.run + (ep ? '&task=' + encodeURIComponent(ep.task) + '&trial=' + ep.trial : '') +
    (document.body.classList.contains('only-viewer') ? '&view=trajectory' : '');
  if (location.hash === hash) return;
  try { history.replaceState(null, '', hash); } catch (e) { /* file: URLs in some browsers */ }
}

function startViewer(suiteHooks) {
  hooks = suiteHooks;
  HINT = $('episode-view').textContent;
  fillRuns();
  Array.prototype.forEach.call(document.querySelectorAll('#viewer .controls select'), function (box) {
    if (box.id !== 'run-select') box.addEventListener('change', renderList);
  });
  var timer = null;
  $('task-filter').addEventListener('input', function () { clearTimeout(timer); timer = setTimeout(renderList, 150); });
  window.addEventListener('hashchange', function () { applyHash().catch(failed); });
  applyHash().then(function () { document.documentElement.setAttribute('data-ready', '1'); }, failed);
}
