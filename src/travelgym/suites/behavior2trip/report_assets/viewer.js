// Behavior2Trip report: the instance viewer's episodes (instruction, behaviour trajectory, agent
// steps, the plan day by day, every check's verdict) on the shared scaffolding
// (report/assets/viewer.js).
var checks = DATA.checks, trajectories = DATA.trajectories || {};
var SHOW_ACTIONS = 20;

function str(x) { return x === undefined || x === null ? '' : String(x); }
function pretty(text) {
  try { return JSON.stringify(JSON.parse(text), null, 2); } catch (e) { return String(text); }
}
function failedChecks(ep) { return (ep.checks || []).filter(function (c) { return c[1] === false; }); }
function outcome(ep) {
  var s = ep.score;
  if (!s) return badge('unscored', 'muted');
  if (!s.delivered) return badge('\u2717 no plan', 'bad');
  if (s.final) return badge('\u2713 final', 'ok');
  return badge('\u2717 ' + failedChecks(ep).length + ' failed', 'bad');
}

function passes(ep) {
  var level = $('level-filter').value, result = $('outcome-filter').value;
  var words = $('task-filter').value.trim().toLowerCase();
  if (level && ep.diff !== level) return false;
  var s = ep.score || {};
  if (result === 'final' && !s.final) return false;
  if (result === 'failed' && !failedChecks(ep).length) return false;
  if (result === 'undelivered' && s.delivered) return false;
  if (result === 'invalid' && !ep.inv) return false;
  if (words && (ep.task + ' ' + ep.instr).toLowerCase().indexOf(words) < 0) return false;
  return true;
}
function listEntry(ep) {
  return { content: [ep.task + (ep.trial ? ' #' + ep.trial : ''), ' ', badge(ep.diff, 'muted'), outcome(ep),
    ep.inv ? badge(ep.inv + ' invalid', 'warn') : null] };
}

function trajectoryNode(ep) {
  var t = trajectories[ep.traj || ep.task];
  var details = el('details', { cls: 'task', id: 'behaviour' });
  if (!t) {
    add(details, [el('summary', { text: 'Behaviour trajectory (not available)' }),
      el('p', { cls: 'hint', text: 'The instance could not be read when the report was written.' })]);
    return details;
  }
  add(details, el('summary', { text: 'Behaviour trajectory (' + t.n + ' actions)' }));
  var cols = ['session', 'timestamp', 'action_type', 'poi_type', 'poi_name', 'city', 'price', 'categories'];
  function table(actions) {
    return el('table', { cls: 'actions' },
      el('thead', null, el('tr', null, cols.map(function (c) { return el('th', { text: c }); }))),
      el('tbody', null, actions.map(function (a) {
        return el('tr', null, cols.map(function (c) {
          var v = a[c];
          if (c === 'city' && a.origin) v = a.origin + ' \u2192 ' + a.city;
          return el('td', { text: Array.isArray(v) ? v.join(', ') : str(v) });
        }));
      })));
  }
  add(details, table(t.actions.slice(0, SHOW_ACTIONS)));
  if (t.actions.length > SHOW_ACTIONS) {
    var more = el('details', null, el('summary', { text: 'the other ' + (t.actions.length - SHOW_ACTIONS) + ' action(s) embedded' }));
    more.addEventListener('toggle', function () {
      if (more.open && more.children.length === 1) add(more, table(t.actions.slice(SHOW_ACTIONS)));
    });
    add(details, more);
  }
  if (t.n > t.actions.length) add(details, el('p', { cls: 'note', text: (t.n - t.actions.length) + ' later action(s) not embedded' }));
  return details;
}

function callNode(c) {
  var details = el('details', { cls: 'call' },
    el('summary', null, el('span', { cls: c.ok ? 'call-ok' : 'call-bad', text: c.ok ? '\u2713 ' : '\u2717 ' }),
      c.n + '(' + (c.a.length > 80 ? c.a.slice(0, 80) + '\u2026' : c.a) + ')',
      el('span', { cls: 'note', text: '  ' + c.rc + ' chars' })));
  details.addEventListener('toggle', function () {
    if (!details.open || details.filled) return;
    details.filled = true;
    add(details, [el('div', { cls: 'note', text: 'arguments' }), el('pre', { cls: 'args', text: pretty(c.a) })]);
    if (c.e) add(details, el('div', { cls: 'error-text', text: c.e }));
    if (c.r !== undefined) add(details, [el('div', { cls: 'note', text: 'result' }), el('pre', { cls: 'result', text: pretty(c.r) })]);
    else if (!c.e) add(details, el('div', { cls: 'note', text: 'result not kept in the trajectory (' + c.rc + ' characters)' }));
  });
  return details;
}
function stepNode(s) {
  var li = el('li', { cls: 'step' + (s.inv ? ' has-invalid' : ''), 'data-step': String(s.i) },
    el('div', { cls: 'turn-head', text: 'step ' + s.i + (s.ans ? ' \u00b7 delivered the answer' : '') }));
  if (s.th) add(li, el('div', { cls: 'think', text: s.th }));
  if (s.x) add(li, el('div', { cls: 'turn-text', text: s.x }));
  (s.inv || []).forEach(function (a) {
    add(li, el('div', { cls: 'invalid', text: '\u26a0 invalid ' + a.s + ' action (' + a.k + '): ' + a.m + (a.raw ? '\n' + a.raw : '') }));
  });
  (s.mem || []).forEach(function (m) {
    add(li, el('div', { cls: 'memop' + (m.ok ? '' : ' bad'), text: 'memory ' + m.a + ' ' + m.k + (m.a === 'write' ? ' = ' + m.v : '') + (m.r ? ' \u2192 ' + m.r : '') }));
  });
  if (s.calls) {
    var failed = s.calls.filter(function (c) { return !c.ok; }).length;
    var outer = el('details', { cls: 'calls' }, el('summary', { text: s.calls.length + ' tool call(s)' + (failed ? ', ' + failed + ' failed' : '') }));
    s.calls.forEach(function (c) { add(outer, callNode(c)); });
    add(li, outer);
  }
  if (s.obs) add(li, el('details', null, el('summary', { text: 'observation' }), el('pre', { text: s.obs })));
  return li;
}

function money(x) { return x === undefined || x === null ? '' : String(x) + ' CNY'; }
function span(a, b) { return a || b ? str(a) + '\u2013' + str(b) : ''; }
function dayNode(d, n) {
  var rows = [];
  (d.intercity_transport || []).forEach(function (l) {
    rows.push(['transport', span(l.departure_time, l.arrival_time), str(l.mode) + ' ' + str(l.number) + ' ' + str(l.from_city) + ' \u2192 ' + str(l.to_city) + (l.seat_class ? ' (' + l.seat_class + ')' : ''), money(l.price)]);
  });
  ['breakfast', 'lunch', 'dinner'].forEach(function (k) {
    var v = d[k];
    if (v) rows.push([k, span(v.start_time, v.end_time), str(v.name) + (v.id ? ' [' + v.id + ']' : ''), money(v.price)]);
  });
  (d.attractions || []).forEach(function (v) { rows.push(['attraction', span(v.start_time, v.end_time), str(v.name) + (v.id ? ' [' + v.id + ']' : ''), money(v.price)]); });
  (d.entertainment || []).forEach(function (v) { rows.push(['entertainment', span(v.start_time, v.end_time), str(v.name) + (v.id ? ' [' + v.id + ']' : ''), money(v.price)]); });
  (d.local_transport || []).forEach(function (l) { rows.push(['local', str(l.start_time), str(l.from) + ' \u2192 ' + str(l.to) + ' by ' + str(l.mode) + (l.minutes ? ', ' + l.minutes + ' min' : ''), money(l.cost)]); });
  var s = d.accommodation;
  if (s) rows.push(['hotel', span(s.check_in_time, s.check_out_time), str(s.name) + (s.id ? ' [' + s.id + ']' : ''), money(s.price)]);
  rows.sort(function (a, b) { return a[1] < b[1] ? -1 : a[1] > b[1] ? 1 : 0; });
  return el('div', { cls: 'day', 'data-day': String(d.day || n + 1) },
    el('h4', { text: 'Day ' + (d.day || n + 1) + (d.date ? ' \u00b7 ' + d.date : '') + (d.city ? ' \u00b7 ' + d.city : '') }),
    d.weather ? el('div', { cls: 'note', text: d.weather }) : null,
    el('table', { cls: 'day-items' }, el('tbody', null, rows.map(function (r) {
      return el('tr', { cls: 'item-' + r[0] }, r.map(function (c) { return el('td', { text: c }); }));
    }))));
}
function checksNode(ep) {
  var table = el('table', { cls: 'checks', id: 'check-verdicts' },
    el('thead', null, el('tr', null, ['check', 'group', 'verdict', 'reason'].map(function (h) { return el('th', { text: h }); }))));
  var body = el('tbody');
  (ep.checks || []).forEach(function (c) {
    var info = checks[c[0]] || { id: '?' };
    var cls = c[1] === false ? 'fail' : c[1] === true ? 'pass' : 'na';
    add(body, el('tr', { cls: cls, 'data-check': info.id, title: info.title ? info.title + ': ' + info.rule : null },
      el('th', { scope: 'row' }, el('code', { text: info.id })), el('td', { text: info.group }),
      el('td', { cls: 'verdict', text: c[1] === false ? '\u2717 failed' : c[1] === true ? '\u2713 passed' : 'n/a' }),
      el('td', { text: c[2] })));
  });
  add(table, body);
  return table;
}
function scoreCard(ep) {
  var s = ep.score;
  var box = el('div', { cls: 'scorecard ' + (s && s.final ? 'ok' : 'bad'), id: 'scorecard' });
  if (!s) { add(box, 'This episode was not scored.'); return box; }
  var dl = el('dl');
  function row(k, v) { add(dl, [el('dt', { text: k }), el('dd', { text: v })]); }
  row('Delivered', s.delivered ? 'yes' : 'no');
  row('Commonsense (C)', s.c_passed + ' / ' + s.c_applicable + (s.c_pass ? ' \u2713' : ' \u2717'));
  row('User preference (UPC)', s.upc_passed + ' / ' + s.upc_applicable + (s.upc_pass ? ' \u2713' : ' \u2717'));
  row('Final', s.final ? 'passed' : 'failed');
  row('Invalid actions', String(ep.inv) + (ep.inv ? ' (P_action = \u22121)' : ''));
  row('Termination', ep.term + ' \u00b7 ' + ep.calls + ' tool call(s) \u00b7 ' + ep.dur + ' s');
  add(box, dl);
  return box;
}

function renderEpisode(view, ep) {
  add(view, el('h3', null, ep.task + ' ', badge(ep.diff, 'muted'), outcome(ep)));
  add(view, scoreCard(ep));
  if (ep.err) add(view, el('pre', { cls: 'error-text', text: ep.err }));
  add(view, [el('h4', { text: 'Instruction' }), el('div', { cls: 'turn-text', id: 'instruction', text: ep.instr })]);
  add(view, trajectoryNode(ep));
  add(view, el('h4', { text: 'Agent steps (' + ep.steps.length + ')' }));
  add(view, el('ol', { cls: 'steps', id: 'steps' }, ep.steps.map(stepNode)));
  if (ep.memory) add(view, el('details', null, el('summary', { text: 'memory at the end' }), el('pre', { text: pretty(ep.memory) })));
  add(view, el('h4', { text: 'Final plan' }));
  var plan = el('div', { id: 'plan' });
  if (ep.days) ep.days.forEach(function (d, n) { add(plan, dayNode(d, n)); });
  else add(plan, el('p', { cls: 'error-text', text: 'No plan delivered.' }));
  if (ep.problems && ep.problems.length) add(plan, el('ul', { cls: 'notes', id: 'plan-problems' }, ep.problems.map(function (p) { return el('li', { text: p }); })));
  add(view, plan);
  if (ep.answer) add(view, el('details', null, el('summary', { text: 'raw answer' }), el('pre', { cls: 'raw', text: ep.answer })));
  add(view, el('h4', { text: 'Checks (' + failedChecks(ep).length + ' failed)' }));
  add(view, checksNode(ep));
}

startViewer({ passes: passes, listEntry: listEntry, renderEpisode: renderEpisode });
