/* edge-agent phone page: asks over MQTT v5 (WebSockets) with the phone's paired name.
   Protocol: deploy/mosquitto/PROTOCOL.md. No build step; mqtt.min.js is the vendored MQTT.js. */
'use strict';

const HISTORY_MAX = 20;            // questions and answers kept on the phone
const SESSION_EXPIRY_S = 86400;    // the broker keeps our replies this long while the phone sleeps
const QUESTION_EXPIRY_S = 3600;    // a question still queued after this is dropped by the broker
const RECONNECT_MS = 1000;         // pause between reconnection attempts
const REFETCH_MAX_AGE_MS = 86400e3; // unanswered requests older than this are not asked again
const BUSY_RETRIES = 3;            // automatic re-asks after a `busy` error that gives retry_after
const FINAL = ['answer', 'needs_confirmation', 'error'];
const REFUSED = [4, 5, 134, 135];  // CONNACK codes: bad name/password, not authorized (v3.1.1, v5)
const KEY = {creds: 'ea.creds', client: 'ea.client', history: 'ea.history'};

const $ = (id) => document.getElementById(id);
const store = {
  get(key, fallback) {
    try { const v = localStorage.getItem(key); return v === null ? fallback : JSON.parse(v); }
    catch (e) { return fallback; }
  },
  set(key, value) { localStorage.setItem(key, JSON.stringify(value)); },
  drop(key) { localStorage.removeItem(key); },
};

let creds = null;          // {u, p, t, d}: name, password, topic prefix, device to ask
let client = null;         // the MQTT.js client
let everConnected = false;
let history = store.get(KEY.history, []);   // entries, oldest first
const byRid = new Map();   // request id (ask, confirm or retried ask) -> entry
const devices = new Map(); // device -> its latest retained status

/* ---------- credentials: from the URL fragment (never sent to a server) or typed in ---------- */

function readFragment() {
  if (!location.hash || location.hash.length < 2) return null;
  const f = new URLSearchParams(location.hash.slice(1));
  if (!f.get('u') || !f.get('p')) return null;
  return {u: f.get('u'), p: f.get('p'), t: f.get('t') || 'edge/v1', d: f.get('d') || 'pi', b: f.get('b') || ''};
}

function loadCreds() {
  const fromUrl = readFragment();
  if (fromUrl) {
    store.set(KEY.creds, fromUrl);
    // Take the password out of the address bar and the browser history.
    window.history.replaceState(null, '', location.pathname + location.search);
  }
  return store.get(KEY.creds, null);
}

function clientId(name) {
  let id = store.get(KEY.client, null);
  if (!id || !id.startsWith(name + '-')) {
    id = `${name}-page-${Math.random().toString(36).slice(2, 10)}`;
    store.set(KEY.client, id);
  }
  return id;
}

/* ---------- topics ---------- */

const topic = {
  ask: (device) => `${creds.t}/${device}/ask/${creds.u}`,
  confirm: (device) => `${creds.t}/${device}/confirm/${creds.u}`,
  ack: (device) => `${creds.t}/${device}/ack/${creds.u}`,
  reply: (rid) => `${creds.t}/reply/${creds.u}/${rid}`,
  replies: () => `${creds.t}/reply/${creds.u}/#`,
  statuses: () => `${creds.t}/+/status`,
};

function newRequestId() {
  const rnd = new Uint32Array(2);
  crypto.getRandomValues(rnd);
  return `w-${Date.now().toString(36)}-${rnd[0].toString(36)}${rnd[1].toString(36)}`;
}

/* ---------- connection ---------- */

function setConn(text, kind) {
  const el = $('conn');
  el.textContent = text;
  el.dataset.state = kind;
}

/* The broker: the listener that served the page, or `b` from the pairing URL (a wss:// listener
   beside a plain page listener), but only on this page's own host, so a crafted link cannot
   send this phone's questions elsewhere. */
function brokerUrl() {
  const own = `${location.protocol === 'https:' ? 'wss' : 'ws'}://${location.host}/mqtt`;
  if (!creds.b) return own;
  try {
    const u = new URL(creds.b);
    if ((u.protocol === 'ws:' || u.protocol === 'wss:') && u.hostname === location.hostname) return u.href;
  } catch (err) { /* not a URL: fall through */ }
  return own;
}

function connect() {
  setConn('Connecting…', 'connecting');
  client = mqtt.connect(brokerUrl(), {
    protocolVersion: 5, clean: false, clientId: clientId(creds.u),
    username: creds.u, password: creds.p,
    reconnectPeriod: RECONNECT_MS, connectTimeout: 10000,
    properties: {sessionExpiryInterval: SESSION_EXPIRY_S},
  });
  client.on('connect', onConnect);
  client.on('reconnect', () => setConn('Reconnecting…', 'connecting'));
  client.on('offline', () => setConn('Offline: reconnecting by itself…', 'offline'));
  client.on('error', onError);
  client.on('message', onMessage);
}

function onConnect() {
  setConn(everConnected ? `Reconnected as ${creds.u}` : `Connected as ${creds.u}`, 'online');
  everConnected = true;
  client.subscribe({[topic.replies()]: {qos: 1}, [topic.statuses()]: {qos: 1}}, () => {
    refetchUnanswered();
  });
}

function onError(err) {
  if (REFUSED.includes(err && err.code)) {
    client.end(true);
    client = null;
    setConn('The broker refused this phone: pair it again.', 'refused');
    showPairing();
  } else {
    setConn(`Connection problem: ${err && err.message ? err.message : err}`, 'offline');
  }
}

/* An answer that arrived while the phone slept is fetched again: the same request id never
   runs twice, and a finished one answers with its stored final event. */
function refetchUnanswered() {
  const now = Date.now();
  for (const e of history) {
    if (now - e.ts > REFETCH_MAX_AGE_MS) continue;
    if (!e.final && !e.retryAt) publishAsk(e);
    if (e.confirm && e.confirm.state === 'sent') publishConfirm(e);
  }
}

/* ---------- requests ---------- */

function publish(t, body, rid, cb) {
  const opts = {qos: 1, properties: {responseTopic: topic.reply(rid), correlationData: rid,
                                     messageExpiryInterval: QUESTION_EXPIRY_S}};
  client.publish(t, JSON.stringify(body), opts, cb || (() => {}));
}

function publishAsk(e) {
  byRid.set(e.rid, e);
  publish(topic.ask(e.device), {request_id: e.rid, question: e.question}, e.rid);
}

function publishConfirm(e) {
  byRid.set(e.confirm.rid, e);
  // A pool's answer names the board that previewed it: the confirm goes there (our own topic only).
  const t = ownConfirmTopic(e.confirmTopic) ? e.confirmTopic : topic.confirm(e.device);
  publish(t, {request_id: e.confirm.rid, action_id: e.final.action_id}, e.confirm.rid);
}

function ownConfirmTopic(t) {
  if (typeof t !== 'string') return false;  // an entry saved before confirm topics were kept
  const parts = t.split('/');
  const head = `${creds.t}/`;
  return t.startsWith(head) && parts.length === creds.t.split('/').length + 3 &&
    parts[parts.length - 2] === 'confirm' && parts[parts.length - 1] === creds.u &&
    !/[+#]/.test(parts[parts.length - 3]);
}

function ask(question, device) {
  const rid = newRequestId();
  const e = {key: rid, rid, device, question, ts: Date.now(), state: 'sent', position: 0,
             pills: [], seqs: [], final: null, busyRetries: 0};
  e.t0 = performance.now();
  history.push(e);
  while (history.length > HISTORY_MAX) history.shift();
  save();
  render(e);
  publishAsk(e);
}

function reask(e) {
  byRid.delete(e.rid);
  Object.assign(e, {rid: newRequestId(), state: 'sent', position: 0, pills: [], seqs: [], final: null,
                    retryAt: null, t0: performance.now(), pillMs: undefined, answerMs: undefined});
  save();
  render(e);
  publishAsk(e);
}

function confirmAction(e) {
  e.confirm = {rid: newRequestId(), state: 'sent', seqs: [], final: null};
  save();
  render(e);
  publishConfirm(e);
}

function cancelAction(e) {
  e.confirm = {state: 'cancelled'};
  save();
  render(e);
}

function acknowledge(e, rid) {
  // Tells the agent the final event arrived, so it need not send it again (harmless if unused).
  client.publish(topic.ack(e.device), JSON.stringify({request_id: rid}), {qos: 1}, () => {});
}

/* ---------- events ---------- */

function decode(payload) {
  try { return JSON.parse(new TextDecoder().decode(payload)); } catch (err) { return null; }
}

function onMessage(t, payload) {
  const data = decode(payload);
  if (!data || typeof data !== 'object') return;
  if (t.endsWith('/status') && !t.startsWith(`${creds.t}/reply/`)) return onStatus(t, data);
  const e = byRid.get(data.request_id);
  if (!e) return;
  const part = e.confirm && e.confirm.rid === data.request_id ? e.confirm : e;
  if (FINAL.includes(data.type)) acknowledge(e, data.request_id);
  if (part.seqs.includes(data.seq)) return;  // a repeat after a reconnect or an agent restart
  part.seqs.push(data.seq);
  if (part === e) onAskEvent(e, data); else onConfirmEvent(e, data);
  save();
  render(e);
}

function onAskEvent(e, ev) {
  const ms = Math.round(performance.now() - (e.t0 || 0));
  if (ev.type === 'accepted') e.state = e.state === 'sent' ? 'accepted' : e.state;
  else if (ev.type === 'queued') { e.state = 'queued'; e.position = ev.position; }
  else if (ev.type === 'pill') {
    e.state = 'working';
    if (!e.pills.includes(ev.label)) e.pills.push(ev.label);
    if (e.t0 && e.pillMs === undefined) e.pillMs = ms;
  } else if (FINAL.includes(ev.type)) {
    e.final = ev;
    e.state = ev.type;
    if (e.t0) e.answerMs = ms;
    if (ev.type === 'needs_confirmation') e.confirmTopic = ev.confirm_topic;
    if (ev.type === 'error' && ev.code === 'busy') scheduleBusyRetry(e, ev);
  }
}

function onConfirmEvent(e, ev) {
  if (FINAL.includes(ev.type)) { e.confirm.final = ev; e.confirm.state = ev.type; }
}

/* `busy` (the agent's intake is full, or memory is low) was not logged: the same request id is
   asked again after retry_after_s, and its events then start afresh. */
function scheduleBusyRetry(e, ev) {
  const after = Number(ev.retry_after_s ?? ev.retry_after);
  if (!(after > 0) || e.busyRetries >= BUSY_RETRIES) return;
  e.busyRetries += 1;
  e.retryAt = Date.now() + after * 1000;
  setTimeout(() => {
    if (!e.retryAt) return;
    Object.assign(e, {state: 'sent', pills: [], seqs: [], final: null, retryAt: null});
    save();
    render(e);
    publishAsk(e);
  }, after * 1000);
}

function onStatus(t, data) {
  const name = data.device || t.split('/').slice(-2)[0];
  devices.set(name, data);
  renderDevices();
}

/* ---------- rendering (textContent only: nothing from the network is parsed as HTML) ---------- */

function el(tag, cls, text) {
  const n = document.createElement(tag);
  if (cls) n.className = cls;
  if (text !== undefined) n.textContent = text;
  return n;
}

function stateText(e) {
  switch (e.state) {
    case 'sent': return 'Sent…';
    case 'accepted': return `Accepted by ${e.device}`;
    case 'queued': return `Waiting: ${e.position} ahead`;
    case 'working': return 'Working…';
    default: return '';
  }
}

function render(e) {
  $('empty').hidden = history.length > 0;
  let node = document.querySelector(`article[data-key="${e.key}"]`);
  if (!node) {
    node = el('article', 'entry');
    node.dataset.key = e.key;
    $('log').appendChild(node);
  }
  node.replaceChildren();
  node.dataset.rid = e.rid;
  node.dataset.state = e.state;
  if (e.pillMs !== undefined) node.dataset.pillMs = e.pillMs;
  if (e.answerMs !== undefined) node.dataset.answerMs = e.answerMs;
  node.appendChild(el('p', 'question', e.question));
  const state = stateText(e);
  if (state) node.appendChild(el('p', 'state', state));
  if (e.pills.length) {
    const ul = el('ul', 'pills');
    ul.setAttribute('aria-label', 'Tools used');
    for (const label of e.pills) ul.appendChild(el('li', 'pill', label));
    node.appendChild(ul);
  }
  if (e.final) node.appendChild(renderFinal(e));
  node.scrollIntoView({block: 'end'});
}

function renderFinal(e) {
  const ev = e.final;
  const box = el('div', `final final-${ev.type}`);
  if (ev.type === 'answer') {
    box.appendChild(el('p', 'answer', ev.text));
    const sources = renderSources(ev.sources);
    if (sources) box.appendChild(sources);
    const a = ev.attachment;
    if (a && a.name) {
      const file = el('div', 'attachment');
      file.appendChild(el('p', 'file-name', `📄 ${a.name}`));
      file.appendChild(el('p', 'file-where', [a.device, a.path].filter(Boolean).join(': ')));
      if (a.excerpt) file.appendChild(el('blockquote', 'excerpt', a.excerpt));
      box.appendChild(file);
    }
  } else if (ev.type === 'needs_confirmation') {
    // The exact preview first; the assistant's words after it, without repeating the preview.
    // The action id is for typed confirms (`edge-agent confirm ID`); here the buttons carry it.
    let said = ev.text.startsWith(ev.preview) ? ev.text.slice(ev.preview.length) : ev.text;
    said = said.replace(` (action ${ev.action_id})`, '').trim();
    box.appendChild(el('p', 'preview', ev.preview));
    if (said) box.appendChild(el('p', 'answer', said));
    box.appendChild(renderConfirm(e));
  } else {
    box.setAttribute('role', 'alert');
    let msg = ev.message || ev.code;
    if (e.retryAt && e.retryAt > Date.now()) msg += ` Asking again in ${Math.ceil((e.retryAt - Date.now()) / 1000)} s.`;
    box.appendChild(el('p', 'error-text', msg));
    const again = el('button', 'secondary', 'Ask again');
    again.type = 'button';
    again.addEventListener('click', () => reask(e));
    box.appendChild(again);
  }
  return box;
}

/* What the answer rests on, small and folded: where each entry comes from, and its exact words. */
function renderSources(sources) {
  const list = (sources || []).filter(s => s && typeof s === 'object' && s.title);
  if (!list.length) return null;
  const box = el('details', 'sources');
  box.appendChild(el('summary', null, list.length === 1 ? 'Source' : `Sources (${list.length})`));
  for (const s of list) {
    const item = el('div', 'source');
    const where = [s.store, s.title, s.device].filter(Boolean).join(' · ');
    item.appendChild(el('p', 'source-where', where));
    for (const t of s.text || []) item.appendChild(el('blockquote', 'source-text', t));
    box.appendChild(item);
  }
  return box;
}

function renderConfirm(e) {
  const c = e.confirm;
  if (!c) {
    const row = el('div', 'buttons');
    const yes = el('button', 'primary', 'Confirm');
    const no = el('button', 'secondary', 'Cancel');
    yes.type = no.type = 'button';
    yes.setAttribute('aria-label', `Confirm: ${e.final.preview}`);
    yes.addEventListener('click', () => confirmAction(e));
    no.addEventListener('click', () => cancelAction(e));
    row.append(yes, no);
    return row;
  }
  if (c.state === 'cancelled') return el('p', 'done', 'Cancelled: nothing was changed.');
  if (c.state === 'sent') return el('p', 'state', 'Confirming…');
  const ev = c.final;
  if (ev.type === 'answer') return el('p', 'done', `✓ ${ev.text}`);
  const p = el('p', 'error-text', ev.message || ev.text || ev.code);
  p.setAttribute('role', 'alert');
  return p;
}

function fmt(v, unit) { return v === null || v === undefined ? '–' : `${v}${unit}`; }

function renderDevices() {
  const list = $('device-list');
  list.replaceChildren();
  const names = [...devices.keys()].sort();
  for (const name of names) {
    const s = devices.get(name);
    const li = el('li', `device ${s.state === 'online' ? 'online' : 'offline'}`);
    li.appendChild(el('span', 'name', name));
    li.appendChild(el('span', 'dstate', s.state === 'online' ? 'online' : 'offline'));
    if (s.state === 'online' && (s.role || 'agent') === 'agent') {
      li.appendChild(el('span', 'metric', `mem ${fmt(s.rss_mb, ' MB')}`));
      li.appendChild(el('span', 'metric', `p50 ${fmt(s.latency_p50_ms, ' ms')} · p95 ${fmt(s.latency_p95_ms, ' ms')}`));
      li.appendChild(el('span', 'metric', `queue ${fmt(s.queue_depth, '')}`));
    } else if (s.state === 'online') {
      li.appendChild(el('span', 'metric', s.role || ''));
    }
    list.appendChild(li);
  }
  renderDeviceChoice();
}

function renderDeviceChoice() {
  const select = $('device');
  const current = select.value || creds.d;
  const agents = new Set([creds.d]);
  const pools = new Map(); // a household pool -> whether any of its boards is online
  for (const [name, s] of devices) {
    if ((s.role || 'agent') !== 'agent') continue;
    agents.add(name);
    if (s.pool) pools.set(s.pool, pools.get(s.pool) || s.state === 'online');
  }
  for (const pool of pools.keys()) agents.delete(pool);
  select.replaceChildren();
  for (const pool of [...pools.keys()].sort()) {
    const opt = el('option', '', `${pool} (any board)${pools.get(pool) ? '' : ' (offline)'}`);
    opt.value = pool;
    select.appendChild(opt);
  }
  for (const name of [...agents].sort()) {
    const s = devices.get(name);
    const opt = el('option', '', s && s.state !== 'online' ? `${name} (offline)` : name);
    opt.value = name;
    select.appendChild(opt);
  }
  const choices = new Set([...pools.keys(), ...agents]);
  select.value = choices.has(current) ? current : creds.d;
}

function save() {
  store.set(KEY.history, history.map(({t0, ...kept}) => kept));
}

/* ---------- pairing UI ---------- */

function showPairing() {
  for (const id of ['ask', 'log', 'devices', 'unpair']) $(id).hidden = true;
  $('pair').hidden = false;
  $('pair-user').focus();
}

function start() {
  $('pair').hidden = true;
  for (const id of ['ask', 'log', 'devices', 'unpair']) $(id).hidden = false;
  renderDeviceChoice();
  for (const e of history) { byRid.set(e.rid, e); if (e.confirm && e.confirm.rid) byRid.set(e.confirm.rid, e); render(e); }
  connect();
}

function unpair() {
  if (client) client.end(true);
  client = null;
  everConnected = false;
  for (const key of Object.values(KEY)) store.drop(key);
  history = [];
  byRid.clear();
  devices.clear();
  $('device-list').replaceChildren();
  for (const n of document.querySelectorAll('article.entry')) n.remove();
  $('empty').hidden = false;
  creds = null;
  setConn('Unpaired: this phone no longer holds a name or password.', 'refused');
  showPairing();
}

document.addEventListener('DOMContentLoaded', () => {
  $('ask').addEventListener('submit', (ev) => {
    ev.preventDefault();
    const q = $('q').value.trim();
    if (!q || !client) return;
    ask(q, $('device').value || creds.d);
    $('q').value = '';
  });
  $('pair').addEventListener('submit', (ev) => {
    ev.preventDefault();
    creds = {u: $('pair-user').value.trim(), p: $('pair-pass').value, t: 'edge/v1',
             d: $('pair-device').value.trim() || 'pi'};
    store.set(KEY.creds, creds);
    start();
  });
  // A phone that wakes (tab shown again, network back) reconnects at once, not at the next retry.
  const wake = () => { if (client && !client.connected && !document.hidden) client.reconnect(); };
  document.addEventListener('visibilitychange', wake);
  window.addEventListener('online', wake);
  $('unpair').addEventListener('click', () => {
    if (window.confirm('Unpair this phone? It forgets its name, password and history.')) unpair();
  });
  creds = loadCreds();
  if (creds) start(); else showPairing();
});
