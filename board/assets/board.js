// board.js — the fivezero-board page's logic: one WebSocket to the server (/ws, messages as in
// docs/board.md), the SVG board, the analysis table and win-rate graph, positions in and out.
// Plain browser JavaScript, no framework and no build step; the server embeds this file as is.
'use strict';

(() => {
  const SVG_NS = 'http://www.w3.org/2000/svg';
  const CELL = 40;          // SVG units between two lines of the board
  const MARGIN = 56;        // from the picture's edge to the outer lines: room for coordinates
  const MAX_FILE = 4 * 1024 * 1024; // the server refuses bigger `load` texts; say so before sending
  const LOG_LINES = 60;

  const $ = (id) => document.getElementById(id);

  // What the page knows; `state` and `analysis` are the server's latest messages as they came.
  let socket = null;
  let state = null;
  let analysis = null;
  let connectedOnce = false;   // a hello seen before: a later one is a reconnect
  let gridShape = '';          // "WxH" of the grid drawn, to redraw it only when it changes
  let hoverPoint = null;       // [x, y] under the mouse on the board
  let hoverName = null;        // candidate row under the mouse in the table
  let selectedName = null;     // candidate row clicked in the table (kept until clicked again)
  let analysingWanted = false; // the Analyse button pressed and no state has said otherwise yet

  // ---- small helpers ------------------------------------------------------------------------

  function svgEl(tag, attrs, parent) {
    const node = document.createElementNS(SVG_NS, tag);
    for (const [k, v] of Object.entries(attrs || {})) node.setAttribute(k, v);
    if (parent) parent.appendChild(node);
    return node;
  }

  const px = (x) => MARGIN + x * CELL;
  const colName = (x) => String.fromCharCode(97 + x);            // a, b, c… left to right
  const rowName = (y, height) => String(height - y);              // 1 = the bottom row
  const samePoint = (a, b) => a && b && a[0] === b[0] && a[1] === b[1];
  const colourAt = (ply) => (ply % 2 === 0 ? 'black' : 'white'); // black moves first in all rules
  const pct = (v) => (v == null ? '' : (100 * v).toFixed(1));

  function compact(n) {
    if (n >= 1e6) return (n / 1e6).toFixed(1) + 'M';
    if (n >= 1e4) return Math.round(n / 1e3) + 'k';
    if (n >= 1e3) return (n / 1e3).toFixed(1) + 'k';
    return String(n);
  }

  // ---- the connection -----------------------------------------------------------------------

  function send(msg) {
    if (!socket || socket.readyState !== WebSocket.OPEN) {
      showError('not connected to the server');
      return false;
    }
    socket.send(JSON.stringify(msg));
    return true;
  }

  function connect() {
    const url = (location.protocol === 'https:' ? 'wss://' : 'ws://') + location.host + '/ws';
    socket = new WebSocket(url);
    socket.addEventListener('message', (ev) => onMessage(JSON.parse(ev.data)));
    socket.addEventListener('close', onClose);
    $('connection').hidden = true;
    $('status').textContent = 'connecting…';
  }

  function onClose() {
    document.body.dataset.connected = 'false';
    document.body.dataset.busy = '';
    $('connection').hidden = false;
    $('status').textContent = 'disconnected from the server';
    $('queue').textContent = '';
  }

  const handlers = {
    hello: onHello,
    state: onState,
    analysis: onAnalysis,
    queue: (m) => { $('queue').textContent = queueText(m.ahead); },
    message: (m) => onServerMessage(m.text),
    error: (m) => showError(m.text),
    games: (m) => fillGames(m.games),
    fault: (m) => {
      $('fault').textContent = 'The engine failed: ' + m.text + ' — a new game starts a fresh one.';
    },
  };

  function onMessage(msg) {
    const handle = handlers[msg.type];
    if (handle) handle(msg);
    else addLog('unknown message from the server: ' + msg.type);
  }

  function onHello(m) {
    document.body.dataset.connected = 'true';
    $('model').textContent = m.model || '—';
    $('model').title = 'what the server plays: ' + (m.model || '—');
    $('server-info').textContent = `server ${m.version || ''} · ${m.searches} search(es) at once · ` +
      `${m.max_boards} boards at most`;
    const previous = connectedOnce ? state : null;
    connectedOnce = true;
    if (applyHash()) return;
    // A reconnect finds a fresh session: put the position we showed back on its board.
    if (previous && previous.position) restorePosition(previous);
    else newGameFromForm();
  }

  function queueText(ahead) {
    if (!ahead) return '';
    return `waiting for the CPU: ${ahead} search${ahead === 1 ? '' : 'es'} ahead`;
  }

  function onServerMessage(text) {
    addLog(text);
    // The engine says "model …" when its network changes (a trainer's newer checkpoint lands in
    // the folder the server watches); the next state names the network of this game again.
    if (/^model\b/.test(text)) $('model').textContent = text.replace(/^model:?\s*/, '');
  }

  function addLog(text) {
    const log = $('log');
    const li = document.createElement('li');
    li.textContent = text;
    log.appendChild(li);
    while (log.children.length > LOG_LINES) log.firstChild.remove();
    log.scrollTop = log.scrollHeight;
  }

  function showError(text) {
    $('error').textContent = text;
  }

  // ---- state --------------------------------------------------------------------------------

  // What makes two states the same board, to tell a real change from a repeat of the state
  // (the server may answer a refused move with the unchanged state; the error must stay).
  const boardKey = (s) => [s.rule, s.width, s.height, s.ply, s.line.length, s.position,
    JSON.stringify(s.result)].join('|');

  function onState(s) {
    const old = state;
    state = s;
    if (!old || boardKey(old) !== boardKey(s)) showError('');
    if (old && (old.ply !== s.ply || old.position !== s.position)) {
      analysis = null;    // the candidates were for the position left behind
      selectedName = null;
    }
    if (!old || old.rule !== s.rule || old.width !== s.width || old.height !== s.height) {
      syncGameForm(s);
    }
    analysingWanted = false;
    $('model').textContent = s.model;
    syncSettingsForm(s);
    render();
  }

  function onAnalysis(a) {
    analysis = a;
    renderAnalysis();
  }

  // Whether the analysis in hand is about the position on the board.
  function currentAnalysis() {
    return analysis && state && analysis.ply === state.ply ? analysis : null;
  }

  function render() {
    document.body.dataset.busy = state.busy || '';
    drawGrid(state.width, state.height);
    const svg = $('board');
    svg.dataset.ply = state.ply;
    drawStones();
    drawMarks();
    renderStatus();
    renderControls();
    renderPositionOut();
    drawWinrateGraph();
    renderAnalysis();
  }

  function renderStatus() {
    const text = resultText(state.result);
    $('result').textContent = text;
    let status;
    if (text) status = text;
    else if (state.busy === 'thinking') status = 'fivezero is thinking…';
    else if (state.busy === 'analysing') status = 'analysing…';
    else if (state.engine === state.to_move) status = `fivezero to move (${state.to_move}) — press “Engine move now”`;
    else if (state.engine === 'none') status = `Your move (${state.to_move})`;
    else status = 'Your move';
    $('status').textContent = status;
  }

  function resultText(result) {
    if (!result) return '';
    const who = result.winner ? `${result.winner[0].toUpperCase()}${result.winner.slice(1)} wins` : 'Draw';
    return result.reason ? `${who} (${result.reason})` : who;
  }

  function renderControls() {
    const atStart = state.ply === 0;
    const atEnd = state.ply >= state.line.length;
    $('undo').disabled = atStart;
    $('prev').disabled = atStart;
    $('first').disabled = atStart;
    $('redo').disabled = atEnd;
    $('next').disabled = atEnd;
    $('last').disabled = atEnd;
    $('go').disabled = !!state.result || state.busy === 'thinking';
    $('ply-info').textContent = `${state.ply} / ${state.line.length}`;
    const analysing = state.busy === 'analysing' || analysingWanted;
    $('analyse').textContent = analysing ? 'Stop' : 'Analyse';
    $('analyse').classList.toggle('on', analysing);
    $('analyse').setAttribute('aria-pressed', String(analysing));
  }

  // The form shows the game's rule and size when the game's shape changes (a load, a new game),
  // not on every state, so that settings chosen for the next new game are not overwritten.
  function syncGameForm(s) {
    $('rule').value = s.rule;
    $('size').value = s.width;
  }

  // The engine's side and limit are live settings (sent on change), so they follow the state;
  // a field being edited is left alone.
  function syncSettingsForm(s) {
    const set = (id, v) => { if (document.activeElement !== $(id) && v != null) $(id).value = v; };
    set('engine-side', s.engine);
    if (s.visits != null) { set('limit-kind', 'visits'); set('limit-value', s.visits); }
    else if (s.time_ms != null) { set('limit-kind', 'time'); set('limit-value', s.time_ms); }
    set('nbest', s.nbest);
  }

  // ---- the board ----------------------------------------------------------------------------

  function drawGrid(width, height) {
    const shape = `${width}x${height}`;
    if (shape === gridShape) return;
    gridShape = shape;
    hoverPoint = null;
    const svg = $('board');
    const w = 2 * MARGIN + (width - 1) * CELL;
    const h = 2 * MARGIN + (height - 1) * CELL;
    svg.setAttribute('viewBox', `0 0 ${w} ${h}`);
    svg.dataset.width = width;
    svg.dataset.height = height;
    svg.setAttribute('aria-label', `${width}×${height} board`);
    svg.style.setProperty('--board-scale', Math.min(1, (Math.max(width, height) + 3) / 18));

    const grid = $('layer-grid');
    grid.replaceChildren();
    svgEl('rect', { class: 'wood', x: 1, y: 1, width: w - 2, height: h - 2, rx: 8 }, grid);
    for (let x = 0; x < width; x++) {
      svgEl('line', { class: 'grid-line', x1: px(x), y1: px(0), x2: px(x), y2: px(height - 1) }, grid);
    }
    for (let y = 0; y < height; y++) {
      svgEl('line', { class: 'grid-line', x1: px(0), y1: px(y), x2: px(width - 1), y2: px(y) }, grid);
    }
    svgEl('rect', { class: 'grid-edge', x: px(0), y: px(0), width: (width - 1) * CELL, height: (height - 1) * CELL }, grid);
    for (const [x, y] of starPoints(width, height)) svgEl('circle', { class: 'star', cx: px(x), cy: px(y), r: 4 }, grid);
    drawCoordinates(grid, width, height);
    drawHits(width, height);
  }

  // The usual dots: the centre of an odd board, and the points 3 in from the corners.
  function starPoints(width, height) {
    const points = [];
    if (width % 2 === 1 && height % 2 === 1 && width >= 7) points.push([(width - 1) / 2, (height - 1) / 2]);
    if (width >= 13 && height >= 13) {
      for (const x of [3, width - 4]) for (const y of [3, height - 4]) points.push([x, y]);
    }
    return points;
  }

  // Letters above and below, numbers left and right, as renju diagrams write them.
  function drawCoordinates(grid, width, height) {
    const off = MARGIN - 24;
    for (let x = 0; x < width; x++) {
      for (const y of [off, px(height - 1) + 24]) {
        svgEl('text', { class: 'coord', x: px(x), y }, grid).textContent = colName(x);
      }
    }
    for (let y = 0; y < height; y++) {
      for (const x of [off, px(width - 1) + 24]) {
        svgEl('text', { class: 'coord', x, y: px(y) }, grid).textContent = rowName(y, height);
      }
    }
  }

  // One transparent cell per intersection, topmost, so a click lands on it whatever is drawn.
  function drawHits(width, height) {
    const hits = $('layer-hits');
    hits.replaceChildren();
    for (let y = 0; y < height; y++) {
      for (let x = 0; x < width; x++) {
        svgEl('rect', {
          class: 'hit', x: px(x) - CELL / 2, y: px(y) - CELL / 2, width: CELL, height: CELL,
          'data-x': x, 'data-y': y,
        }, hits);
      }
    }
  }

  function drawStones() {
    const layer = $('layer-stones');
    layer.replaceChildren();
    state.line.slice(0, state.ply).forEach(([x, y], i) => {
      svgEl('circle', {
        class: `stone ${colourAt(i)}`, cx: px(x), cy: px(y), r: CELL * 0.46, 'data-x': x, 'data-y': y,
      }, layer);
    });
  }

  function drawMarks() {
    const layer = $('layer-marks');
    layer.replaceChildren();
    if (!state.result) for (const p of state.forbidden || []) drawForbidden(layer, p);
    if (state.ply > 0) {
      const [x, y] = state.line[state.ply - 1];
      svgEl('circle', { class: 'last', cx: px(x), cy: px(y), r: CELL * 0.12, 'data-x': x, 'data-y': y }, layer);
    }
    drawFive(layer, (state.result && state.result.five) || []);
  }

  function drawForbidden(layer, [x, y]) {
    const g = svgEl('g', { class: 'forbidden', 'data-x': x, 'data-y': y }, layer);
    const d = CELL * 0.2;
    svgEl('line', { x1: px(x) - d, y1: px(y) - d, x2: px(x) + d, y2: px(y) + d }, g);
    svgEl('line', { x1: px(x) - d, y1: px(y) + d, x2: px(x) + d, y2: px(y) - d }, g);
  }

  // A ring round each stone of the five and a stroke through the row.
  function drawFive(layer, five) {
    if (five.length >= 2) {
      const a = five[0];
      const b = five[five.length - 1];
      svgEl('line', { class: 'five-line', x1: px(a[0]), y1: px(a[1]), x2: px(b[0]), y2: px(b[1]) }, layer);
    }
    for (const [x, y] of five) {
      svgEl('circle', { class: 'five', cx: px(x), cy: px(y), r: CELL * 0.5, 'data-x': x, 'data-y': y }, layer);
    }
  }

  // ---- analysis: markers, table, principal variation ----------------------------------------

  function renderAnalysis() {
    if (!state) return;
    const a = currentAnalysis();
    const side = colourAt(a ? a.ply : state.ply);
    // Messages give black's win rate; the page shows the side to move's.
    const forSide = (wr) => (wr == null ? null : side === 'black' ? wr : 1 - wr);
    drawCandidates(a, forSide);
    fillCandidateTable(a, forSide);
    drawPv(a);
    $('cand-side').textContent = side;
    $('analysis-info').textContent = a ? analysisSummary(a) : '';
  }

  function analysisSummary(a) {
    const parts = [`${a.visits.toLocaleString()} visits`, `${(a.elapsed_ms / 1000).toFixed(1)} s`];
    if (a.speed) parts.push(`${Math.round(a.speed).toLocaleString()} visits/s`);
    if (a.proven) parts.push(`proven ${a.proven} for the side to move`);
    if (a.final) parts.push('done');
    return parts.join(' · ');
  }

  function drawCandidates(a, forSide) {
    const layer = $('layer-candidates');
    layer.replaceChildren();
    if (!a) return;
    const occupied = new Set(state.line.slice(0, state.ply).map((p) => p.join(',')));
    a.candidates.forEach((c, i) => {
      if (occupied.has(c.move.join(','))) return;
      const [x, y] = c.move;
      const cls = ['candidate', i === 0 ? 'best' : '', c.proven ? `proven-${c.proven}` : ''].join(' ').trim();
      const g = svgEl('g', { class: cls, 'data-x': x, 'data-y': y }, layer);
      svgEl('circle', { cx: px(x), cy: px(y), r: CELL * 0.44 }, g);
      if (c.proven) {
        svgEl('text', { class: 'big', x: px(x), y: px(y) }, g).textContent = c.proven === 'win' ? 'W' : 'L';
      } else {
        svgEl('text', { x: px(x), y: px(y) - 7 }, g).textContent = compact(c.visits);
        svgEl('text', { x: px(x), y: px(y) + 7 }, g).textContent = pct(forSide(c.winrate));
      }
    });
  }

  function fillCandidateTable(a, forSide) {
    const body = $('candidates').tBodies[0];
    body.replaceChildren();
    if (!a) return;
    const active = activeCandidate(a);
    a.candidates.forEach((c, i) => {
      const tr = document.createElement('tr');
      tr.className = 'cand' + (i === 0 ? ' best' : '') + (c === active ? ' active' : '');
      tr.dataset.name = c.name;
      tr.tabIndex = 0; // reachable by keyboard: Enter selects it like a click
      const proven = c.proven === 'win' ? ['W win', 'proven-w'] : c.proven === 'loss' ? ['L loss', 'proven-l'] : ['', ''];
      const cells = [
        ['name', c.name], ['visits', c.visits.toLocaleString()], ['winrate', pct(forSide(c.winrate))],
        ['prior', pct(c.prior)], ['proven ' + proven[1], proven[0]],
      ];
      for (const [cls, text] of cells) {
        const td = document.createElement('td');
        td.className = cls.trim();
        td.textContent = text;
        tr.appendChild(td);
      }
      body.appendChild(tr);
    });
  }

  // The candidate whose line is shown: the one under the mouse (board, then table), else the
  // one clicked in the table.
  function activeCandidate(a) {
    if (!a) return null;
    const byPoint = hoverPoint && a.candidates.find((c) => samePoint(c.move, hoverPoint));
    if (byPoint) return byPoint;
    const name = hoverName || selectedName;
    return (name && a.candidates.find((c) => c.name === name)) || null;
  }

  function drawPv(a) {
    const layer = $('layer-pv');
    layer.replaceChildren();
    const c = activeCandidate(a);
    $('board').classList.toggle('showing-pv', !!c);
    if (!c) return;
    // The pv may or may not repeat the candidate's own move first; show it first either way.
    const pv = c.pv && c.pv.length && samePoint(c.pv[0], c.move) ? c.pv : [c.move, ...(c.pv || [])];
    const occupied = new Set(state.line.slice(0, state.ply).map((p) => p.join(',')));
    pv.forEach(([x, y], i) => {
      if (occupied.has(`${x},${y}`)) return;
      occupied.add(`${x},${y}`);
      const colour = colourAt(a.ply + i);
      svgEl('circle', { class: `pv ${colour}`, cx: px(x), cy: px(y), r: CELL * 0.44, 'data-x': x, 'data-y': y }, layer);
      svgEl('text', { class: `pv-num on-${colour}`, x: px(x), y: px(y) }, layer).textContent = i + 1;
    });
  }

  // ---- win-rate graph -----------------------------------------------------------------------

  // x: plies 0..line length across 0..100; y: black's win rate, 100 % at the top (y = 0).
  function drawWinrateGraph() {
    const svg = $('winrate-graph');
    svg.replaceChildren();
    const n = Math.max(state.line.length, 1);
    const gx = (ply) => (100 * ply) / n;
    const gy = (wr) => 40 * (1 - wr);
    svgEl('line', { class: 'wr-mid', x1: 0, y1: 20, x2: 100, y2: 20 }, svg);
    const pts = [];
    (state.winrates || []).forEach((wr, ply) => { if (wr != null) pts.push([gx(ply), gy(wr)]); });
    if (pts.length) {
      const line = pts.map((p) => p.join(',')).join(' ');
      svgEl('polygon', { class: 'wr-area', points: `${pts[0][0]},40 ${line} ${pts[pts.length - 1][0]},40` }, svg);
      svgEl('polyline', { class: 'wr-line', points: line }, svg);
    }
    svgEl('line', { class: 'wr-current', x1: gx(state.ply), y1: 0, x2: gx(state.ply), y2: 40 }, svg);
  }

  function onGraphClick(ev) {
    if (!state) return;
    const box = $('winrate-graph').getBoundingClientRect();
    const ply = Math.round(((ev.clientX - box.left) / box.width) * Math.max(state.line.length, 1));
    goto(ply);
  }

  // ---- positions in and out -----------------------------------------------------------------

  function renderPositionOut() {
    $('position-out').value = state.position || '';
    const size = state.width === state.height ? `${state.width}` : `${state.width}x${state.height}`;
    const href = `${location.href.split('#')[0]}#rule=${state.rule}&size=${size}&moves=${state.position || ''}`;
    $('link').href = href;
  }

  // `#rule=renju&size=15&moves=h8i9j10` (size `20` or `20x15`) opens that position, engine off.
  function applyHash() {
    const params = new URLSearchParams(location.hash.slice(1));
    if (!params.has('rule') && !params.has('size') && !params.has('moves')) return false;
    const [w, h] = parseSize(params.get('size'));
    const rule = params.get('rule') || $('rule').value;
    $('engine-side').value = 'none';
    send({ type: 'new_game', rule, width: w, height: h, engine: 'none', ...limitFields() });
    const moves = (params.get('moves') || '').trim();
    if (moves) send({ type: 'load', text: moves });
    return true;
  }

  // A size as asked for (the server refuses one outside 5-22 with a message the page shows).
  function parseSize(text) {
    const m = /^(\d+)(?:x(\d+))?$/.exec(text || '');
    const fallback = sizeOf($('size').value);
    if (!m) return [fallback, fallback];
    return [sizeOf(m[1]), sizeOf(m[2] || m[1])];
  }

  function sizeOf(v) {
    const n = parseInt(v, 10);
    return Number.isFinite(n) ? n : 15;
  }

  function restorePosition(s) {
    send({ type: 'new_game', rule: s.rule, width: s.width, height: s.height, engine: 'none', ...limitFields() });
    send({ type: 'load', text: s.position });
    if (s.engine !== 'none') send({ type: 'settings', engine: s.engine });
  }

  function loadFile(file) {
    if (!file) return;
    if (file.size > MAX_FILE) {
      showError(`“${file.name}” is ${(file.size / 1048576).toFixed(1)} MiB; files up to 4 MiB can be loaded.`);
      return;
    }
    const reader = new FileReader();
    reader.onload = () => send({ type: 'load', text: String(reader.result) });
    reader.onerror = () => showError(`could not read “${file.name}”`);
    reader.readAsText(file);
  }

  function fillGames(games) {
    const select = $('games');
    select.replaceChildren();
    for (const g of games) {
      const opt = document.createElement('option');
      opt.value = g.index;
      const result = g.result ? ` · ${g.result}` : '';
      opt.textContent = `${g.index + 1}. ${g.title || 'game'} — ${g.rule} ${g.width}×${g.height}, ${g.moves} moves${result}`;
      select.appendChild(opt);
    }
    select.disabled = games.length === 0;
  }

  async function copyPosition() {
    const text = state ? state.position || '' : '';
    try {
      await navigator.clipboard.writeText(text);
      addLog('position copied: ' + (text || '(empty board)'));
    } catch (_) {
      // No clipboard API (plain http on another machine): select the text for Ctrl+C instead.
      const out = $('position-out');
      out.focus();
      out.select();
      const copied = document.execCommand('copy'); // old API, but it works where the new one may not
      addLog(copied ? 'position copied' : 'select the position shown and copy it (Ctrl+C)');
    }
  }

  // ---- the form's requests ------------------------------------------------------------------

  function limitFields() {
    const value = Math.max(1, parseInt($('limit-value').value, 10) || 1000);
    return $('limit-kind').value === 'visits' ? { time_ms: null, visits: value } : { time_ms: value, visits: null };
  }

  function newGameFromForm() {
    const size = sizeOf($('size').value);
    $('fault').textContent = '';
    analysis = null;
    selectedName = null;
    send({ type: 'new_game', rule: $('rule').value, width: size, height: size, engine: $('engine-side').value, ...limitFields() });
  }

  function goto(ply) {
    if (!state) return;
    const target = Math.min(state.line.length, Math.max(0, ply));
    if (target !== state.ply) send({ type: 'goto', ply: target });
  }

  function toggleAnalysis() {
    const analysing = state && (state.busy === 'analysing' || analysingWanted);
    if (analysing) {
      analysingWanted = false;
      send({ type: 'stop' });
    } else if (send({ type: 'analyse', nbest: Number($('nbest').value) })) {
      analysingWanted = true;  // shown at once; the server's next state confirms or corrects it
    }
    if (state) renderControls();
  }

  function onNbestChange() {
    const nbest = Number($('nbest').value);
    send({ type: 'settings', nbest });
    // A running analysis restarts with the new count so the table shows it now.
    if (state && state.busy === 'analysing') send({ type: 'analyse', nbest });
  }

  // ---- wiring -------------------------------------------------------------------------------

  function onBoardClick(ev) {
    const hit = ev.target.closest('rect.hit');
    if (hit) send({ type: 'play', x: Number(hit.dataset.x), y: Number(hit.dataset.y) });
  }

  function onBoardHover(ev) {
    const hit = ev.target.closest('rect.hit');
    const p = hit ? [Number(hit.dataset.x), Number(hit.dataset.y)] : null;
    if (samePoint(p, hoverPoint) || (!p && !hoverPoint)) return;
    hoverPoint = p;
    renderAnalysis();
  }

  function setHoverName(name) {
    if (name === hoverName) return;
    hoverName = name;
    renderAnalysis();
  }

  function selectRow(tr) {
    if (!tr) return;
    selectedName = selectedName === tr.dataset.name ? null : tr.dataset.name;
    renderAnalysis();
  }

  // Arrow keys step through the game, unless typing in a field.
  function onKey(ev) {
    const typing = ev.target instanceof Element && ev.target.closest('input, textarea, select');
    if (typing || ev.altKey || ev.ctrlKey || ev.metaKey || !state) return;
    const steps = { ArrowLeft: state.ply - 1, ArrowRight: state.ply + 1, Home: 0, End: state.line.length };
    if (ev.key in steps) {
      ev.preventDefault();
      goto(steps[ev.key]);
    }
  }

  function wire() {
    const click = (id, fn) => $(id).addEventListener('click', fn);
    click('new-game', newGameFromForm);
    click('undo', () => send({ type: 'undo' }));
    click('redo', () => send({ type: 'redo' }));
    click('go', () => send({ type: 'go' }));
    click('analyse', toggleAnalysis);
    click('first', () => goto(0));
    click('prev', () => state && goto(state.ply - 1));
    click('next', () => state && goto(state.ply + 1));
    click('last', () => state && goto(state.line.length));
    click('copy-position', copyPosition);
    click('reconnect', connect);
    click('load-position', () => {
      const text = $('position-text').value.trim();
      if (text) send({ type: 'load', text });
    });
    for (const b of document.querySelectorAll('.size-quick')) {
      b.addEventListener('click', () => { $('size').value = b.dataset.size; });
    }
    $('engine-side').addEventListener('change', () => send({ type: 'settings', engine: $('engine-side').value }));
    $('limit-kind').addEventListener('change', () => send({ type: 'settings', ...limitFields() }));
    $('limit-value').addEventListener('change', () => send({ type: 'settings', ...limitFields() }));
    $('nbest').addEventListener('change', onNbestChange);
    $('file').addEventListener('change', (ev) => {
      loadFile(ev.target.files[0]);
      ev.target.value = ''; // the same file can be chosen again
    });
    $('games').addEventListener('change', (ev) => {
      if (ev.target.value !== '') send({ type: 'open_game', index: Number(ev.target.value) });
    });

    const board = $('board');
    board.addEventListener('click', onBoardClick);
    board.addEventListener('mouseover', onBoardHover);
    board.addEventListener('mouseleave', onBoardHover);

    const rows = $('candidates').tBodies[0];
    rows.addEventListener('mouseover', (ev) => setHoverName(ev.target.closest('tr.cand')?.dataset.name || null));
    rows.addEventListener('mouseleave', () => setHoverName(null));
    rows.addEventListener('click', (ev) => selectRow(ev.target.closest('tr.cand')));
    rows.addEventListener('keydown', (ev) => { if (ev.key === 'Enter' || ev.key === ' ') { ev.preventDefault(); selectRow(ev.target.closest('tr.cand')); } });

    $('winrate-graph').addEventListener('click', onGraphClick);
    document.addEventListener('keydown', onKey);
    window.addEventListener('hashchange', () => { if (connectedOnce) applyHash(); });
  }

  function fillNbest() {
    for (let n = 1; n <= 10; n++) {
      const opt = document.createElement('option');
      opt.value = n;
      opt.textContent = n;
      $('nbest').appendChild(opt);
    }
    $('nbest').value = 5;
  }

  // For debugging and the WebDriver tests: the latest messages and the way to send one.
  window.fivezero = {
    get state() { return state; },
    get analysis() { return analysis; },
    send,
  };

  fillNbest();
  wire();
  drawGrid(15, 15);
  connect();
})();
