"""The HTML report's inline CSS and JavaScript, kept as Python strings so the report needs no
package data files (see ``report.py``). The viewer is plain ES2017 without libraries."""

# Runs first, in <head>: records script errors, rejected promises, console.error and failed
# resource loads into <pre id="console-errors"> and the data-errors attribute of <html>, so a
# headless browser's DOM dump shows them.
ERROR_HOOK_JS = r"""
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
"""

REPORT_CSS = r"""
:root { --fg: #1d232b; --muted: #5b6470; --line: #d8dde3; --bg: #fff; --soft: #f4f6f8;
  --ok: #17803d; --bad: #b42318; --warn: #9a6700; --accent: #2357c5; --user: #eaf2ff;
  --agent: #f5f5f3; }
* { box-sizing: border-box; }
body { margin: 0; font: 14px/1.45 system-ui, -apple-system, "Segoe UI", "DejaVu Sans", sans-serif;
  color: var(--fg); background: var(--bg); }
header { padding: 16px 24px 8px; border-bottom: 1px solid var(--line); background: var(--soft); }
header h1 { margin: 0 0 4px; font-size: 20px; }
.meta { margin: 0 0 8px; color: var(--muted); }
nav a { margin-right: 14px; color: var(--accent); text-decoration: none; font-weight: 600; }
main { padding: 8px 24px 40px; }
h2 { margin: 28px 0 10px; font-size: 18px; border-bottom: 2px solid var(--line); padding-bottom: 4px; }
h3 { margin: 18px 0 6px; font-size: 15px; }
h4, h5, h6 { margin: 14px 0 6px; font-size: 14px; }
table { border-collapse: collapse; margin: 6px 0 12px; font-variant-numeric: tabular-nums; }
th, td { border: 1px solid var(--line); padding: 3px 8px; text-align: left; vertical-align: top; }
thead th { background: var(--soft); }
td.num { text-align: right; }
table.runs td:last-child { color: var(--muted); font-size: 12px; }
.notes { color: var(--warn); margin: 4px 0; }
.note, .hint { color: var(--muted); }
.sub { margin-left: 12px; }
pre { white-space: pre-wrap; word-break: break-word; margin: 4px 0; }
pre.raw { max-height: 400px; overflow: auto; background: var(--soft); padding: 8px; font-size: 12px; }
.plots { display: flex; flex-wrap: wrap; gap: 16px; }
figure.plot { margin: 0; border: 1px solid var(--line); padding: 6px; background: #fff;
  max-width: 100%; }
figure.plot img { max-width: 100%; height: auto; display: block; }
figcaption { color: var(--muted); font-size: 12px; text-align: center; }
.controls { display: flex; flex-wrap: wrap; gap: 12px; align-items: center; margin-bottom: 8px; }
.controls input[type=search] { width: 300px; }
#list-count { color: var(--muted); }
.viewer-body { display: grid; grid-template-columns: 300px 1fr; gap: 16px; align-items: start; }
#episode-list { list-style: none; margin: 0; padding: 0; max-height: 80vh; overflow: auto;
  border: 1px solid var(--line); position: sticky; top: 8px; }
#episode-list li button { all: unset; display: block; width: 100%; box-sizing: border-box;
  padding: 4px 8px; cursor: pointer; border-bottom: 1px solid var(--soft); font-size: 13px; }
#episode-list li button:hover { background: var(--soft); }
#episode-list li.selected button { background: var(--user); font-weight: 600; }
.badge { display: inline-block; min-width: 1.2em; padding: 0 5px; border-radius: 8px;
  font-size: 11px; font-weight: 600; margin-left: 4px; border: 1px solid transparent; }
.badge.ok { color: var(--ok); border-color: var(--ok); }
.badge.bad { color: var(--bad); border-color: var(--bad); }
.badge.star { color: #fff; background: var(--ok); }
.badge.warn { color: var(--warn); border-color: var(--warn); }
.badge.muted { color: var(--muted); border-color: var(--line); }
#episode-view h3 { margin-top: 0; font-size: 17px; }
.pager { float: right; }
.pager button { margin-left: 4px; }
.facts { color: var(--muted); margin: 2px 0; }
.scorecard { border: 1px solid var(--line); border-left: 4px solid var(--muted); padding: 8px 12px;
  margin: 8px 0; background: var(--soft); }
.scorecard.ok { border-left-color: var(--ok); }
.scorecard.bad { border-left-color: var(--bad); }
.scorecard dl { display: grid; grid-template-columns: max-content 1fr; gap: 2px 14px; margin: 0; }
.scorecard dt { color: var(--muted); }
.scorecard dd { margin: 0; }
.others a { margin-right: 10px; color: var(--accent); cursor: pointer; }
details.task { margin: 8px 0; }
details.task > summary, details.calls > summary { cursor: pointer; font-weight: 600; }
ol.turns { list-style: none; padding: 0; margin: 10px 0; }
li.turn { margin: 8px 0; padding: 8px 12px; border-radius: 8px; border: 1px solid var(--line); }
li.turn.user { background: var(--user); margin-right: 12%; }
li.turn.agent { background: var(--agent); margin-left: 12%; }
li.turn.failed { border-color: var(--bad); }
.turn-head { font-size: 12px; color: var(--muted); margin-bottom: 4px; }
.turn-text { white-space: pre-wrap; word-break: break-word; }
.acts { margin: 2px 0 4px; }
.act { display: inline-block; font-size: 12px; padding: 1px 6px; margin: 0 4px 3px 0;
  border-radius: 10px; background: #fff; border: 1px solid #b7c8e8; }
.act.reveal { border-color: #6c8fd6; }
.act.flag_violation { border-color: var(--bad); color: var(--bad); }
.act.accept { border-color: var(--ok); color: var(--ok); }
.instruction { font-size: 12px; color: var(--muted); font-style: italic; margin-top: 4px; }
.error-text { color: var(--bad); white-space: pre-wrap; }
details.calls { margin-top: 6px; }
details.call { margin: 2px 0 2px 12px; font-size: 12.5px; }
details.call > summary { cursor: pointer; font-family: ui-monospace, "DejaVu Sans Mono", monospace; }
details.call pre { background: #fff; border: 1px solid var(--line); padding: 4px 6px;
  max-height: 320px; overflow: auto; font-size: 12px; }
.call-ok { color: var(--ok); }
.call-bad { color: var(--bad); }
.rec { margin-top: 6px; padding: 6px 8px; border-radius: 6px; background: #fff;
  border: 1px solid var(--line); }
.rec.ok { border-color: var(--ok); }
.rec.bad { border-color: var(--bad); }
.rec code { font-size: 12px; }
.rec ul { margin: 4px 0 0 18px; padding: 0; }
.hidden-yet { color: var(--warn); font-size: 12px; }
table.constraints td:first-child { text-align: right; }
#console-errors { color: var(--bad); margin: 16px 24px; }
body.only-viewer main > section:not(#viewer) { display: none; }
body.only-viewer #viewer h2 { margin-top: 8px; }
@media (max-width: 900px) { .viewer-body { grid-template-columns: 1fr; }
  #episode-list { max-height: 240px; position: static; } }
"""

DOM_HELPERS_JS = r"""
  function $(id) { return document.getElementById(id); }
  function el(tag, props) {
    var node = document.createElement(tag);
    if (props) {
      Object.keys(props).forEach(function (k) {
        var v = props[k];
        if (v === undefined || v === null) return;
        if (k === 'text') node.textContent = v;
        else if (k === 'cls') node.className = v;
        else if (k === 'on') Object.keys(v).forEach(function (e) { node.addEventListener(e, v[e]); });
        else node.setAttribute(k, v);
      });
    }
    for (var i = 2; i < arguments.length; i++) add(node, arguments[i]);
    return node;
  }
  function add(node, child) {
    if (child === undefined || child === null || child === false) return;
    if (Array.isArray(child)) { child.forEach(function (c) { add(node, c); }); return; }
    node.appendChild(typeof child === 'string' ? document.createTextNode(child) : child);
  }
"""

VIEWER_JS = r"""
(function () {
  'use strict';
  var DATA = JSON.parse(document.getElementById('report-data').textContent);
  var runs = DATA.runs, tasks = DATA.tasks, verdicts = DATA.verdicts, tools = DATA.tools;
  var argumentTable = DATA.arguments || [], prompts = DATA.prompts || [];
  var state = { run: 0, id: null };
  var visible = [];
  var LEVELS = { 1: 'I', 2: 'II', 3: 'III' };

/*DOM_HELPERS*/
  function fmt(x, digits) {
    if (x === undefined || x === null) return '\u2013';
    if (typeof x === 'number') {
      if (Number.isInteger(x)) return x.toLocaleString('en-US');
      return x.toFixed(digits === undefined ? 2 : digits);
    }
    return String(x);
  }
  function badge(text, cls, title) { return el('span', { cls: 'badge ' + cls, text: text, title: title }); }
  function outcome(ep) {
    var s = ep.score || {};
    if (s.optimal) return badge('\u2605 optimal', 'star', 'feasible and optimal');
    if (s.feasible) {
      var top = s.top || {};
      var label = top['5'] ? 'top 5%' : top['10'] ? 'top 10%' : top['20'] ? 'top 20%' : 'feasible';
      return badge('\u2713 ' + label, 'ok', 'feasible');
    }
    if (!ep.score) return badge('unscored', 'muted');
    return badge('\u2717 infeasible', 'bad', (s.violations || []).join('\n'));
  }
  function recText(rec) {
    if (!rec) return '\u2013';
    return ['hotel', 'flight', 'permit'].filter(function (k) { return rec[k]; }).map(function (k) {
      var v = rec[k];
      return k + ' ' + (Array.isArray(v) ? v.join(' / ') : v);
    }).join(', ') || '(empty)';
  }

  // ----- run select and list ---------------------------------------------------------------
  function fillRuns() {
    var select = $('run-select');
    runs.forEach(function (run, i) {
      select.appendChild(el('option', { value: String(i), text: run.label + ' (' + run.episodes.length + ')' }));
    });
    select.addEventListener('change', function () {
      state.run = Number(select.value);
      var current = state.id && findEpisode(state.run, taskOf(state.id), trialOf(state.id));
      state.id = current ? current.id : null;
      renderList(); renderView(); writeHash();
    });
  }
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
  var haystacks = {};
  function haystack(runIndex, ep) {
    var key = runIndex + '|' + ep.id;
    if (!haystacks[key]) {
      var t = tasks[ep.task] || {};
      var parts = [ep.id, t.park, t.metric, t.objective, t.objective_text, t.story];
      ep.turns.forEach(function (turn) { if (turn.x) parts.push(turn.x); });
      haystacks[key] = parts.join('\n').toLowerCase();
    }
    return haystacks[key];
  }
  function passes(ep) {
    var level = $('level-filter').value, result = $('outcome-filter').value;
    var query = $('task-filter').value.trim().toLowerCase();
    var t = tasks[ep.task] || {}, s = ep.score || {};
    if (level && String(t.level) !== level) return false;
    if (result === 'feasible' && !s.feasible) return false;
    if (result === 'infeasible' && s.feasible) return false;
    if (result === 'optimal' && !s.optimal) return false;
    if (result === 'suboptimal' && !(s.feasible && !s.optimal)) return false;
    if (result === 'error' && !(ep.err || ep.term === 'error' || ep.turns.some(function (x) { return x.err; }))) return false;
    if (query && haystack(state.run, ep).indexOf(query) < 0) return false;
    return true;
  }
  function renderList() {
    var list = $('episode-list');
    list.textContent = '';
    var run = runs[state.run];
    visible = run ? run.episodes.filter(passes) : [];
    visible.forEach(function (ep) {
      var t = tasks[ep.task] || {};
      var li = el('li', { 'data-id': ep.id, cls: ep.id === state.id ? 'selected' : '' },
        el('button', { type: 'button', title: t.objective_text || '', on: { click: function () { select(ep.id); } } },
          ep.task + (ep.trial ? ' #' + ep.trial : ''), ' ',
          badge('L' + (LEVELS[t.level] || '?'), 'muted'), outcome(ep)));
      list.appendChild(li);
    });
    $('list-count').textContent = visible.length + ' of ' + (run ? run.episodes.length : 0) + ' episodes';
  }
  function select(id) {
    state.id = id;
    Array.prototype.forEach.call($('episode-list').children, function (li) {
      li.className = li.getAttribute('data-id') === id ? 'selected' : '';
    });
    renderView(); writeHash();
  }

  // ----- the episode view --------------------------------------------------------------------
  function revealedAt(ep) {
    var at = {};
    ep.turns.forEach(function (turn) {
      (turn.acts || []).forEach(function (a) {
        if (a.t === 'reveal' && a.c !== undefined && at[a.c] === undefined) at[a.c] = turn.i;
      });
    });
    return at;
  }
  function constraintText(task, index) {
    var c = task && task.constraints ? task.constraints[index] : null;
    return c ? c.text : 'constraint #' + index;
  }
  function actChip(task, act) {
    var label = act.t;
    if (act.t === 'open') label = 'open: ' + (act.d || '');
    else if (act.t === 'reveal' || act.t === 'restate') label = act.t + ' #' + act.c + ': ' + constraintText(task, act.c);
    else if (act.t === 'flag_violation') label = 'flag' + (act.c !== undefined ? ' #' + act.c : '') + ': ' + (act.d || '');
    return el('span', { cls: 'act ' + act.t, text: label });
  }
  function verdictBox(task, rec, vIndex, turnIndex, at) {
    var v = vIndex === undefined || vIndex === null ? null : verdicts[vIndex];
    var box = el('div', { cls: 'rec ' + (v ? (v.ok ? 'ok' : 'bad') : '') },
      el('strong', { text: 'Recommendation: ' }), el('code', { text: recText(rec) }));
    if (!v) return box;
    if (v.error) { add(box, el('div', { cls: 'error-text', text: 'verdict failed: ' + v.error })); return box; }
    if (v.hotel) add(box, el('div', { cls: 'facts', text: 'best of the hotels: ' + v.hotel }));
    if (v.ok) {
      var total = task && task.truth ? task.truth.n : null;
      add(box, el('div', null, badge(v.opt ? '\u2605 optimal' : '\u2713 feasible', v.opt ? 'star' : 'ok'),
        ' rank ' + fmt(v.rank) + (total ? ' of ' + fmt(total) + ' feasible plans' : '') +
        ' (top ' + fmt(v.pct, 2) + ' %), value ' + fmt(v.val) +
        (task && task.truth ? ' vs optimum ' + fmt(task.truth.optimum) : '') +
        (v.top ? ' \u00b7 OR-5 ' + (v.top[0] ? 'yes' : 'no') + ', OR-10 ' + (v.top[1] ? 'yes' : 'no') + ', OR-20 ' + (v.top[2] ? 'yes' : 'no') : '')));
    } else {
      var ul = el('ul');
      (v.v || []).forEach(function (pair) {
        var index = pair[0], text = pair[1];
        var known = index === null || (at[index] !== undefined && at[index] < turnIndex);
        ul.appendChild(el('li', null,
          index === null ? '' : el('strong', { text: '#' + index + ' ' + constraintText(task, index) + ' \u2014 ' }),
          text, index !== null && !known ? el('span', { cls: 'hidden-yet', text: ' (not yet revealed by the user)' }) : null));
      });
      add(box, [el('div', null, badge('\u2717 violates ' + (v.v || []).length, 'bad')), ul]);
    }
    return box;
  }
  function pretty(value) {
    if (value === undefined || value === null) return '';
    if (typeof value !== 'string') return JSON.stringify(value, null, 2);
    try { return JSON.stringify(JSON.parse(value), null, 2); } catch (e) { return value; }
  }
  function callNode(call, n) {
    var name = tools[call[0]] || '?', args = argumentTable[call[1]], ok = call[2] === 1, chars = call[3] || 0;
    var short = args === undefined || args === null ? '' : (typeof args === 'string' ? args : JSON.stringify(args));
    if (short.length > 110) short = short.slice(0, 110) + '\u2026';
    var status = ok ? el('span', { cls: 'call-ok', text: ' \u2713 ' + fmt(chars) + ' chars' })
      : el('span', { cls: 'call-bad', text: ' \u2717 ' + (call[5] || 'error') });
    var details = el('details', { cls: 'call' },
      el('summary', null, (n + 1) + '. ' + name + '(' + short + ')', status));
    details.fill = function () {
      if (details.dataset.filled) return;
      details.dataset.filled = '1';
      add(details, [el('div', { cls: 'facts', text: 'arguments' }), el('pre', { text: pretty(args) })]);
      if (call[6]) add(details, el('div', { cls: 'error-text', text: call[6] }));
      if (call[4] !== undefined && call[4] !== null) {
        add(details, [el('div', { cls: 'facts', text: 'result' }), el('pre', { text: pretty(call[4]) })]);
      } else if (ok) {
        add(details, el('div', { cls: 'facts', text: 'result not stored in the run (' + fmt(chars) + ' characters)' }));
      }
    };
    details.addEventListener('toggle', function () { if (details.open) details.fill(); });
    return details;
  }
  function callsNode(calls) {
    var failed = calls.filter(function (c) { return c[2] !== 1; }).length;
    var counts = {};
    calls.forEach(function (c) { var n = tools[c[0]] || '?'; counts[n] = (counts[n] || 0) + 1; });
    var names = Object.keys(counts).map(function (n) { return n + ' \u00d7' + counts[n]; }).join(', ');
    var details = el('details', { cls: 'calls' },
      el('summary', null, calls.length + ' tool call' + (calls.length === 1 ? '' : 's') +
        (failed ? ' (' + failed + ' failed)' : '') + ': ' + names));
    details.fill = function () {
      if (details.dataset.filled) return;
      details.dataset.filled = '1';
      calls.forEach(function (c, i) { details.appendChild(callNode(c, i)); });
    };
    details.addEventListener('toggle', function () { if (details.open) details.fill(); });
    return details;
  }
  function turnNode(task, turn, at) {
    var user = turn.r === 'u';
    var head = (user ? 'User' : 'Agent') + ' \u00b7 turn ' + turn.i;
    if (turn.dur) head += ' \u00b7 ' + fmt(turn.dur) + ' s';
    if (turn.tok) head += ' \u00b7 ' + fmt(turn.tok[0] + turn.tok[1]) + ' tokens';
    var li = el('li', { cls: 'turn ' + (user ? 'user' : 'agent') + (turn.err ? ' failed' : ''), 'data-turn': String(turn.i) },
      el('div', { cls: 'turn-head', text: head }));
    if (turn.acts) add(li, el('div', { cls: 'acts' }, turn.acts.map(function (a) { return actChip(task, a); })));
    add(li, el('div', { cls: 'turn-text', text: turn.x || (user ? '' : '(no text)') }));
    if (turn.p !== undefined) add(li, el('div', { cls: 'instruction', text: 'Simulator instruction: ' + prompts[turn.p] }));
    if (turn.err) add(li, el('div', { cls: 'error-text', text: 'Error: ' + turn.err }));
    if (turn.calls) add(li, callsNode(turn.calls));
    if (turn.rec) add(li, verdictBox(task, turn.rec, turn.v, turn.i, at));
    return li;
  }
  function scoreCard(ep, task) {
    var s = ep.score || {};
    var card = el('div', { cls: 'scorecard ' + (s.feasible ? 'ok' : 'bad'), id: 'scorecard' });
    var dl = el('dl');
    function row(k, v) { add(dl, [el('dt', { text: k }), el('dd', null, v)]); }
    row('Final plan', el('code', { text: recText(ep.final) }));
    row('Feasible', s.feasible ? badge('\u2713 yes', 'ok') : badge('\u2717 no', 'bad'));
    row('Within top', ['5', '10', '20'].map(function (a) { return (s.top && s.top[a] ? '\u2713 ' : '\u2717 ') + a + '%  '; }).join(''));
    row('Optimal', s.optimal ? badge('\u2605 yes', 'star') : 'no');
    if (s.feasible) {
      var n = task.truth ? task.truth.n : null;
      row('Rank', fmt(s.rank) + (n ? ' of ' + fmt(n) + ' feasible plans' : '') +
        (s.rank_percentile !== undefined && s.rank_percentile !== null ? ' (top ' + fmt(s.rank_percentile, 2) + ' %)' : ''));
      row('Objective value', fmt(s.objective_value) + ' vs optimum ' + fmt(s.optimum_value) + ' (gap ' + fmt(s.optimality_gap) + ')');
    }
    if (s.violations && s.violations.length) {
      row('Violations', el('ul', null, s.violations.map(function (v) { return el('li', { text: v }); })));
    }
    if (task.truth) row('Ground-truth optimum', el('code', { text: recText(task.truth.plan) }));
    row('Conversation', ep.term + ', ' + ep.turns.length + ' turns, ' + fmt(ep.calls) + ' tool calls, ' + fmt(ep.dur) + ' s' +
      (ep.tok ? ', ' + fmt(ep.tok[0] + ep.tok[1]) + ' tokens' : '') +
      (ep.tall !== undefined ? ', all constraints known at user turn ' + ep.tall : ''));
    if (ep.err) row('Error', el('pre', { cls: 'error-text', text: ep.err }));
    add(card, dl);
    return card;
  }
  function otherRuns(ep) {
    if (runs.length < 2) return null;
    var box = el('div', { cls: 'others' }, el('span', { cls: 'facts', text: 'Same task in other runs: ' }));
    runs.forEach(function (run, i) {
      if (i === state.run) return;
      var other = findEpisode(i, ep.task, ep.trial);
      if (!other) return;
      add(box, el('a', { on: { click: function () { state.run = i; $('run-select').value = String(i); state.id = other.id; renderList(); renderView(); writeHash(); } } },
        run.label, outcome(other)));
    });
    return box;
  }
  function expandCalls(open) {
    Array.prototype.forEach.call(document.querySelectorAll('#turns details.calls'), function (outer) {
      if (open) outer.fill();
      outer.open = open;
      Array.prototype.forEach.call(outer.querySelectorAll('details.call'), function (inner) {
        if (open) inner.fill();
        inner.open = open;
      });
    });
  }
  function renderView() {
    var view = $('episode-view');
    view.textContent = '';
    var run = runs[state.run];
    var ep = null;
    if (run && state.id) ep = run.episodes.filter(function (e) { return e.id === state.id; })[0] || null;
    document.documentElement.setAttribute('data-selected', ep ? ep.id : '');
    if (!ep) { view.appendChild(el('p', { cls: 'hint', text: 'Pick a task on the left.' })); return; }
    var task = tasks[ep.task] || { constraints: [] };
    var at = revealedAt(ep);
    var position = visible.map(function (e) { return e.id; }).indexOf(ep.id);
    var pager = el('span', { cls: 'pager' },
      el('button', { type: 'button', text: '\u2190 previous', on: { click: function () { if (position > 0) select(visible[position - 1].id); } } }),
      el('button', { type: 'button', text: 'next \u2192', on: { click: function () { if (position >= 0 && position < visible.length - 1) select(visible[position + 1].id); } } }));
    if (position <= 0) pager.firstChild.disabled = true;
    if (position < 0 || position >= visible.length - 1) pager.lastChild.disabled = true;
    add(view, [
      el('h3', { id: 'episode-title' }, pager, ep.task + (ep.trial ? ' (trial ' + ep.trial + ')' : '') + ' \u00b7 ' + run.label),
      el('p', { cls: 'facts', text: 'Level ' + (LEVELS[task.level] || '?') + ' \u00b7 ' + task.objective + ' (' + task.metric + ') \u00b7 park ' + task.park }),
      el('p', { cls: 'objective', text: 'Objective: ' + (task.objective_text || '') }),
      task.persona ? el('p', { cls: 'facts', text: 'Persona: ' + task.persona.revelation_speed + ' revelation (p = ' +
        task.persona.reveal_probability + '), ' + task.persona.trust + ', ' + task.persona.reliability + ', style ' +
        task.persona.style + ' (' + task.persona.style_text + ')' }) : null,
      otherRuns(ep),
      scoreCard(ep, task)
    ]);
    var table = el('table', { cls: 'constraints' },
      el('thead', null, el('tr', null, ['#', 'kind', 'given', 'revealed at turn', 'requirement'].map(function (h) { return el('th', { text: h }); }))));
    var body = el('tbody');
    (task.constraints || []).forEach(function (c, i) {
      body.appendChild(el('tr', null, el('td', { text: String(i) }), el('td', { text: c.kind }), el('td', { text: c.rev }),
        el('td', { text: at[i] === undefined ? 'never' : String(at[i]) }), el('td', { text: c.text })));
    });
    add(table, body);
    add(view, el('details', { cls: 'task', open: '' }, el('summary', { text: 'Task: story, requirements, objective' }),
      el('p', { text: task.story || '' }), table, el('p', { text: task.objective_text || '' })));
    add(view, el('h4', null, 'Conversation ',
      el('button', { type: 'button', id: 'expand-calls', text: 'expand all tool calls', on: { click: function () { expandCalls(true); } } }),
      ' ', el('button', { type: 'button', text: 'collapse', on: { click: function () { expandCalls(false); } } })));
    add(view, el('ol', { cls: 'turns', id: 'turns' }, ep.turns.map(function (turn) { return turnNode(task, turn, at); })));
  }

  // ----- the URL hash: #run=N&task=ID&trial=K ----------------------------------------------
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
    renderList(); renderView();
    if (p.expand === 'calls') expandCalls(true);
    var list = $('episode-list'), chosen = list.querySelector('li.selected');
    if (chosen) {  // scroll the list only (not the window) to the chosen task
      list.scrollTop += chosen.getBoundingClientRect().top - list.getBoundingClientRect().top - list.clientHeight / 3;
    }
    if (task && !only && !initialScrollDone) { initialScrollDone = true; window.scrollTo(0, $('viewer').offsetTop); }
  }
  var initialScrollDone = false;
  function writeHash() {
    var hash = '#run=' + state.run + (state.id ? '&task=' + encodeURIComponent(taskOf(state.id)) + '&trial=' + trialOf(state.id) : '') +
      (document.body.classList.contains('only-viewer') ? '&view=trajectory' : '');
    if (location.hash === hash) return;
    try { history.replaceState(null, '', hash); } catch (e) { /* file: URLs in some browsers */ }
  }

  fillRuns();
  ['level-filter', 'outcome-filter'].forEach(function (id) { $(id).addEventListener('change', renderList); });
  var timer = null;
  $('task-filter').addEventListener('input', function () { clearTimeout(timer); timer = setTimeout(renderList, 150); });
  window.addEventListener('hashchange', applyHash);
  applyHash();
  document.documentElement.setAttribute('data-ready', '1');
})();
"""
VIEWER_JS = VIEWER_JS.replace("/*DOM_HELPERS*/\n", DOM_HELPERS_JS)
