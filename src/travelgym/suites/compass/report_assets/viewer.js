// COMPASS report: the trajectory viewer's episodes (conversation turns with dialogue acts, tool
// calls, recommendations and their verdicts) on the shared scaffolding (report/assets/viewer.js).
var tasks = DATA.tasks, verdicts = DATA.verdicts, tools = DATA.tools;
var prompts = DATA.prompts || [];  // DATA.arguments: packed, read once the episodes are unpacked
var LEVELS = { 1: 'I', 2: 'II', 3: 'III' };

function fmt(x, digits) {
  if (x === undefined || x === null) return '\u2013';
  if (typeof x === 'number') {
    if (Number.isInteger(x)) return x.toLocaleString('en-US');
    return x.toFixed(digits === undefined ? 2 : digits);
  }
  return String(x);
}
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

// ----- the list ----------------------------------------------------------------------------
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
function listEntry(ep) {
  var t = tasks[ep.task] || {};
  return { title: t.objective_text || '', content: [ep.task + (ep.trial ? ' #' + ep.trial : ''), ' ',
    badge('L' + (LEVELS[t.level] || '?'), 'muted'), outcome(ep)] };
}

// ----- the episode view --------------------------------------------------------------------
function revealedAt(ep) {
  var at = {};
  ep.turns.forEach(function (turn) {
    (turn.acts || []).forEach(function (a) {
      if ((a.t === 'reveal' || a.t === 'answer') && a.c !== undefined && at[a.c] === undefined) at[a.c] = turn.i;
    });
  });
  return at;
}
function constraintText(task, index) {
  var c = task && task.constraints ? task.constraints[index] : null;
  return c ? c.text + (c.initial ? ' (first stated as: ' + c.initial + ')' : '') : 'constraint #' + index;
}
function actChip(task, act) {
  var label = act.t;
  if (act.t === 'open') label = 'open: ' + (act.d || '');
  else if (act.t === 'reveal' || act.t === 'restate' || act.t === 'answer') {
    label = act.t + ' #' + act.c + (act.d ? ' (asked: ' + act.d + ')' : '') + ': ' + constraintText(task, act.c);
  }
  else if (act.t === 'revise') {
    var final = task && task.constraints ? task.constraints[act.c] : null;
    label = 'revise #' + act.c + ': ' + (final ? final.text : 'constraint #' + act.c) + (act.d ? ' (was: ' + act.d + ')' : '');
  }
  else if (act.t === 'flag_violation') label = 'flag' + (act.c !== undefined ? ' #' + act.c : '') + ': ' + (act.d || '');
  else if (act.t === 'no_preference' || act.t === 'restate_objective') label = act.t + (act.d ? ': ' + act.d : '');
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
  var name = tools[call[0]] || '?', args = (DATA.arguments || [])[call[1]], ok = call[2] === 1, chars = call[3] || 0;
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
    add(box, el('a', { on: { click: function () { showEpisode(i, other.id); } } },
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
function renderEpisode(view, ep, run) {
  var task = tasks[ep.task] || { constraints: [] };
  var persona = ep.per || task.persona;  // the conversation's own, else the task file's
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
    persona ? el('p', { cls: 'facts', text: 'Persona: ' + persona.revelation_speed + ' revelation (p = ' +
      persona.reveal_probability + '), ' + persona.trust + ', ' + persona.reliability + ', style ' +
      persona.style + ' (' + persona.style_text + ')' }) : null,
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
startViewer({
  passes: passes,
  listEntry: listEntry,
  renderEpisode: renderEpisode,
  afterHash: function (p) { if (p.expand === 'calls') expandCalls(true); }
});
