"""The phone page in a real headless Chromium, against a real Mosquitto (the generated config with
the page's websockets listener) and `edge-agent serve` on the scripted model.
"""
from __future__ import annotations

import json
import shutil
import struct
import subprocess
from pathlib import Path

from edge_agent.eval.phone_rig import PREFIX
from edge_agent.net.pairing import remove_member
from edge_agent.ops.qr import write_qr_png

TIMEOUT_MS = 20_000  # a step waits at most this long
QUESTION = "What is the date today?"


def _scan(png: Path) -> str:
    zbarimg = shutil.which("zbarimg")
    assert zbarimg, "zbarimg missing: apt-get install zbar-tools (deploy/setup.sh does)"
    return subprocess.run([zbarimg, "-q", "--raw", str(png)], capture_output=True, text=True,
                          check=True).stdout.strip()


def _open(rig, context, name="phone", url=None):
    page = context.new_page()
    errors: list[str] = []
    page.on("pageerror", lambda err: errors.append(str(err)))
    page.goto(url or rig.url(name))
    page.wait_for_selector("#conn[data-state=online]", timeout=TIMEOUT_MS)
    page.errors = errors
    return page


def _ask(page, question: str):
    page.fill("#q", question)
    page.press("#q", "Enter")  # send on Enter
    return page.locator("article.entry").last


def _png_size(path: Path) -> tuple[int, int]:
    head = path.read_bytes()[:24]
    assert head[:8] == b"\x89PNG\r\n\x1a\n"
    return struct.unpack(">II", head[16:24])


def test_open_from_qr_ask_and_see_pills_then_the_answer(rig, tmp_path):
    rig.start_agent_online(150)  # 150 ms a generation: the pill shows well before the answer
    url = _scan(write_qr_png(rig.url(), tmp_path / "qr.png"))
    assert url == rig.url() and "#u=phone&p=" in url
    phone = rig.new_phone()
    page = _open(rig, phone, url=url)
    assert "#" not in page.url  # the password left the address bar at once
    stored = json.loads(page.evaluate("localStorage.getItem('ea.creds')"))
    assert stored["u"] == "phone" and stored["d"] == "pi" and stored["t"] == PREFIX

    entry = _ask(page, QUESTION)
    entry.locator(".pill").first.wait_for(timeout=TIMEOUT_MS)
    assert entry.locator(".pill").first.inner_text() == "Date"
    entry.locator(".answer").wait_for(timeout=TIMEOUT_MS)
    # The page's own clock (ms from the click): the pill showed before the answer.
    pill_ms, answer_ms = int(entry.get_attribute("data-pill-ms")), int(entry.get_attribute("data-answer-ms"))
    assert 0 < pill_ms < answer_ms, (pill_ms, answer_ms)
    assert entry.locator(".answer").inner_text().startswith("Today is")
    assert entry.get_attribute("data-state") == "answer"
    assert page.locator("#device-list .device.online .name").first.inner_text() == "pi"
    assert page.input_value("#q") == ""

    shot = tmp_path / "phone.png"
    page.screenshot(path=str(shot))
    assert _png_size(shot) == (720, 1560)  # 360x780 CSS pixels at 2x

    # The history stays on the phone: a reload shows the question and its answer again.
    page.reload()
    page.wait_for_selector("article.entry .answer", timeout=TIMEOUT_MS)
    assert page.locator("article.entry .question").first.inner_text() == QUESTION
    assert page.errors == []


def test_remember_shows_the_preview_and_confirm_writes_the_note(rig):
    rig.start_agent_online(0)
    page = _open(rig, rig.new_phone())
    entry = _ask(page, "Remember: the bike lock code is 4417.")
    entry.locator(".preview").wait_for(timeout=TIMEOUT_MS)
    assert entry.locator(".preview").inner_text() == 'Add to notebook: "The bike lock code is 4417."'
    assert rig.notes() == []  # nothing changes before the confirm
    entry.get_by_role("button", name="Confirm").click()
    entry.locator(".done").wait_for(timeout=TIMEOUT_MS)
    assert entry.locator(".done").inner_text().startswith("✓")
    assert [body for _, body in rig.notes()] == ["The bike lock code is 4417."]

    other = _ask(page, "Remember: the spare key is under the blue pot.")
    other.get_by_role("button", name="Cancel").click()
    assert other.locator(".done").inner_text() == "Cancelled: nothing was changed."
    assert len(rig.notes()) == 1


def test_a_second_phone_cannot_see_the_first_phones_answers(rig):
    rig.start_agent_online(50)
    first = _open(rig, rig.new_phone(), "phone")
    second = _open(rig, rig.new_phone(), "phone2")
    # The second phone tries to read the first's replies (and everything else) with its own
    # credentials, straight through the page's MQTT client.
    spy = """() => {
        window.spied = [];
        client.on('message', (t, p) => window.spied.push(t));
        client.subscribe(['edge/v1/reply/phone/#', 'edge/v1/reply/#', '#'], {qos: 1});
    }"""
    second.evaluate(spy)
    first.evaluate(spy)  # the control: the same spy on the asker's own page does see the replies
    second.wait_for_timeout(300)
    entry = _ask(first, QUESTION)
    entry.locator(".answer").wait_for(timeout=TIMEOUT_MS)
    second.wait_for_timeout(500)
    assert [t for t in first.evaluate("window.spied") if t.startswith("edge/v1/reply/phone/")]
    spied = second.evaluate("window.spied")
    assert not [t for t in spied if "/reply/" in t], spied
    assert second.locator("article.entry").count() == 0
    assert "phone2" not in entry.get_attribute("data-rid")


def test_broker_restart_mid_question_and_the_answer_still_shows(rig):
    rig.start_agent_online(400)  # about 2 s a question: time to restart the broker under it
    page = _open(rig, rig.new_phone())
    entry = _ask(page, QUESTION)
    page.wait_for_selector("article.entry[data-state=accepted], article.entry[data-state=working]",
                           timeout=TIMEOUT_MS)
    rig.broker.restart()
    entry.locator(".answer").wait_for(timeout=TIMEOUT_MS)
    assert entry.locator(".answer").inner_text().startswith("Today is")
    assert page.inner_text("#conn").startswith("Reconnected")
    assert entry.locator(".pill").count() == 1  # the repeats after the reconnect were dropped


def test_an_answer_that_arrived_while_the_phone_slept_is_fetched_by_its_id(rig):
    rig.start_agent_online(300)
    phone = rig.new_phone()
    page = _open(rig, phone)
    entry = _ask(page, QUESTION)
    page.wait_for_selector("article.entry[data-state=accepted], article.entry[data-state=working]",
                           timeout=TIMEOUT_MS)
    rid = entry.get_attribute("data-rid")
    page.close()  # the phone sleeps; the answer arrives meanwhile
    page = _open(rig, phone, url=rig.url().split("#")[0])  # reopened from its bookmark: no fragment
    again = page.locator(f"article.entry[data-rid='{rid}']")
    again.locator(".answer").wait_for(timeout=TIMEOUT_MS)
    assert again.locator(".answer").inner_text().startswith("Today is")


def test_unpair_forgets_the_credentials_and_pair_rm_revokes_them(rig):
    rig.start_agent_online(0)
    phone = rig.new_phone()
    page = _open(rig, phone)
    _ask(page, QUESTION).locator(".answer").wait_for(timeout=TIMEOUT_MS)
    page.once("dialog", lambda dialog: dialog.dismiss())  # a slip of the thumb changes nothing
    page.click("#unpair")
    assert page.evaluate("localStorage.getItem('ea.creds')") and page.is_visible("#ask")
    page.once("dialog", lambda dialog: dialog.accept())
    page.click("#unpair")
    page.wait_for_selector("#pair:not([hidden])")
    assert page.evaluate("Object.keys(localStorage)") == []
    assert page.locator("article.entry").count() == 0

    second = _open(rig, rig.new_phone(), "phone2")
    remove_member(rig.pairing, "phone2", prefix=PREFIX)
    rig.broker.reload()  # what `pair rm` asks for: the broker re-reads its password file
    second.wait_for_selector("#conn[data-state=refused]", timeout=TIMEOUT_MS)
    assert second.is_visible("#pair")


def test_labels_focus_order_and_touch_targets_on_a_small_screen(rig):
    rig.start_agent_online(0)
    page = _open(rig, rig.new_phone())
    _ask(page, "Remember: the bins go out on Tuesday.").locator(".preview").wait_for(timeout=TIMEOUT_MS)
    unlabelled = page.evaluate("""() => [...document.querySelectorAll('input, select, textarea')]
        .filter(e => !e.hidden && e.offsetParent !== null && e.labels.length === 0).map(e => e.id)""")
    assert unlabelled == []
    nameless = page.evaluate("""() => [...document.querySelectorAll('button')]
        .filter(b => b.offsetParent !== null && !(b.textContent.trim() || b.getAttribute('aria-label')))
        .length""")
    assert nameless == 0
    # Tab order: the answer's buttons, then the device, unpair, the question and Send.
    page.evaluate("document.activeElement.blur()")
    order = []
    for _ in range(6):
        page.keyboard.press("Tab")
        order.append(page.evaluate("document.activeElement.id || document.activeElement.textContent"))
    assert order == ["Confirm", "Cancel", "device", "unpair", "q", "send"]
    # Everything fits 360 px (no sideways scrolling) and every target is at least 44 px tall.
    assert page.evaluate("document.documentElement.scrollWidth") <= 360
    small = page.evaluate("""() => [...document.querySelectorAll('button, select, input')]
        .filter(e => e.offsetParent !== null && e.getBoundingClientRect().height < 44).map(e => e.id || e.textContent)""")
    assert small == []
    # The question box sits at the bottom of the screen, within thumb reach.
    box = page.locator("#q").bounding_box()
    assert box["y"] + box["height"] > 780 - 80



def _self_signed(directory: Path) -> tuple[Path, Path]:
    """The README's self-signed example, for 127.0.0.1."""
    subprocess.run(["openssl", "req", "-x509", "-newkey", "rsa:2048", "-nodes", "-days", "2",
                    "-keyout", "page.key", "-out", "page.crt", "-subj", "/CN=127.0.0.1",
                    "-addext", "subjectAltName=IP:127.0.0.1"], cwd=directory, check=True, capture_output=True)
    return directory / "page.crt", directory / "page.key"


def test_debian_tls_set_up_page_over_http_and_mqtt_over_wss(tmp_path):
    """Debian's Mosquitto (libwebsockets with HTTP/2) cannot serve the page over TLS to Chrome
    (mosquitto#2251), so the page comes over http and MQTT (the password) goes over wss."""
    from edge_agent.eval.phone_rig import PhoneRig

    rig = PhoneRig(tmp_path / "rig", tls=_self_signed(tmp_path), wss=True)
    try:
        rig.launch_browser()
        rig.start_agent_online(0)
        assert f"&b=wss://127.0.0.1:{rig.wss_port}/mqtt" in rig.url()
        # The phone accepted the self-signed certificate once (what the browser's warning offers).
        page = _open(rig, rig.new_phone(ignore_https_errors=True))
        _ask(page, QUESTION).locator(".answer").wait_for(timeout=TIMEOUT_MS)
        # Not accepted: no connection, so no password was sent in the clear instead.
        page = rig.new_phone().new_page()
        page.goto(rig.url())
        page.wait_for_timeout(1500)
        assert page.get_attribute("#conn", "data-state") != "online"
    finally:
        rig.close()


def test_a_crafted_link_cannot_point_the_page_at_another_host(rig):
    rig.start_agent_online(0)
    evil = rig.url() + "&b=" + "wss://attacker.example:9443/mqtt"
    page = _open(rig, rig.new_phone(), url=evil)  # it connects to its own host, not the link's
    assert json.loads(page.evaluate("localStorage.getItem('ea.creds')"))["b"] == "wss://attacker.example:9443/mqtt"
    assert page.evaluate("brokerUrl()").startswith(f"ws://127.0.0.1:{rig.ws_port}/")


def test_the_page_over_tls_on_one_listener_where_libwebsockets_has_no_http2(tmp_path):
    """https page + wss on one TLS listener: right for Mosquitto builds whose libwebsockets has
    no HTTP/2 (the browser here is told not to use it, which is what such a build amounts to)."""
    from edge_agent.eval.phone_rig import PhoneRig

    rig = PhoneRig(tmp_path / "rig", tls=_self_signed(tmp_path))
    try:
        rig.launch_browser("--disable-http2")
        rig.start_agent_online(0)
        assert rig.url().startswith("https://127.0.0.1:")
        page = _open(rig, rig.new_phone(ignore_https_errors=True))
        assert page.evaluate("location.protocol") == "https:"
        _ask(page, QUESTION).locator(".answer").wait_for(timeout=TIMEOUT_MS)
    finally:
        rig.close()


def test_the_page_acknowledges_each_final_event(rig):
    rig.start_agent_online(0)
    page = _open(rig, rig.new_phone())
    entry = _ask(page, QUESTION)
    entry.locator(".answer").wait_for(timeout=TIMEOUT_MS)
    rid = entry.get_attribute("data-rid")
    deadline = 50
    while deadline and not [r for r in rig.request_rows() if r["request_id"] == rid and r["acked"]]:
        page.wait_for_timeout(100)
        deadline -= 1
    row = next(r for r in rig.request_rows() if r["request_id"] == rid)
    assert row["sender"] == "phone" and row["acked"] == 1


def test_busy_is_asked_again_after_retry_after_s(rig):
    # One question at a time per asker, and a 1 s retry-after: the second question is refused
    # as busy while the first runs, then asked again by the page with the same id.
    rig.start_agent_online(300, EDGE_AGENT_MQTT__PER_ASKER_LIMIT="1", EDGE_AGENT_MQTT__BUSY_RETRY_AFTER_S="1")
    page = _open(rig, rig.new_phone())
    first = _ask(page, QUESTION)
    second = _ask(page, "What is the date tomorrow?")
    second.locator(".final-error").wait_for(timeout=TIMEOUT_MS)
    assert "Asking again in" in second.locator(".error-text").inner_text()
    rid = second.get_attribute("data-rid")
    first.locator(".answer").wait_for(timeout=TIMEOUT_MS)
    second.locator(".answer").wait_for(timeout=TIMEOUT_MS)
    assert second.get_attribute("data-rid") == rid  # the same request, never run twice
    assert [r["request_id"] for r in rig.request_rows()].count(rid) == 1


def test_a_second_phone_cannot_confirm_the_first_phones_action(rig):
    rig.start_agent_online(0)
    first = _open(rig, rig.new_phone(), "phone")
    entry = _ask(first, "Remember: the alarm code is 2580.")
    entry.locator(".preview").wait_for(timeout=TIMEOUT_MS)
    action_id = first.evaluate(f"history.find(e => e.rid === '{entry.get_attribute('data-rid')}').final.action_id")
    second = _open(rig, rig.new_phone(), "phone2")
    # phone2 learned the id somehow and sends the confirm as itself, through its page's client.
    second.evaluate("""(action) => new Promise(done => {
        client.on('message', (t, p) => { if (t.endsWith('/x-steal')) { window.stolen = JSON.parse(new TextDecoder().decode(p)); done(); } });
        client.publish('edge/v1/pi/confirm/phone2', JSON.stringify({request_id: 'x-steal', action_id: action}),
                       {qos: 1, properties: {responseTopic: 'edge/v1/reply/phone2/x-steal', correlationData: 'x-steal'}});
    })""", action_id)
    stolen = second.evaluate("window.stolen")
    assert stolen["type"] == "error" and stolen["code"] == "not_found"
    assert rig.notes() == []
    entry.get_by_role("button", name="Confirm").click()  # the asker still can
    entry.locator(".done").wait_for(timeout=TIMEOUT_MS)
    assert [body for _, body in rig.notes()] == ["The alarm code is 2580."]


def test_an_answer_with_a_file_shows_its_name_place_excerpt_and_folded_sources(rig):
    """Rendering only: an answer event as the agent sends it for a found file, fed to the page's
    own message handler (the scripted route never finds files)."""
    rig.start_agent_online(0)
    page = _open(rig, rig.new_phone())
    entry = _ask(page, QUESTION)
    entry.locator(".answer").wait_for(timeout=TIMEOUT_MS)
    rid = entry.get_attribute("data-rid")
    event = {"request_id": rid, "seq": 99, "type": "answer", "text": "cv.pdf on laptop: jo@example.org",
             "exit_kind": "complete", "usage": {},
             "sources": [{"store": "files", "title": "cv.pdf", "device": "laptop", "text": ["<i>jo@example.org</i>"]}],
             "attachment": {"device": "laptop", "path": "/home/me/cv.pdf", "name": "cv.pdf",
                            "excerpt": "<b>jo@example.org</b>"}}
    page.evaluate("(ev) => onMessage('edge/v1/reply/phone/x', new TextEncoder().encode(JSON.stringify(ev)))", event)
    assert entry.locator(".file-name").inner_text() == "📄 cv.pdf"
    assert entry.locator(".file-where").inner_text() == "laptop: /home/me/cv.pdf"
    assert entry.locator(".excerpt").inner_text() == "<b>jo@example.org</b>"  # shown as text, never as HTML
    assert entry.locator(".excerpt b").count() == 0
    sources = entry.locator("details.sources")
    assert sources.get_attribute("open") is None  # folded: the answer comes first
    assert sources.locator("summary").inner_text() == "Source"
    sources.locator("summary").click()
    assert sources.locator(".source-where").inner_text() == "files · cv.pdf · laptop"
    assert sources.locator(".source-text").inner_text() == "<i>jo@example.org</i>" and sources.locator("i").count() == 0


def test_a_waiting_question_shows_its_queue_position(rig):
    rig.start_agent_online(300)  # about 1.5 s a question
    first = _open(rig, rig.new_phone(), "phone")
    second = _open(rig, rig.new_phone(), "phone2")
    _ask(first, QUESTION)
    first.wait_for_selector("article.entry[data-state=accepted], article.entry[data-state=working]",
                            timeout=TIMEOUT_MS)
    waiting = _ask(second, QUESTION)
    second.wait_for_selector("article.entry[data-state=queued]", timeout=TIMEOUT_MS)
    assert waiting.locator(".state").inner_text() == "Waiting: 1 ahead"
    waiting.locator(".answer").wait_for(timeout=TIMEOUT_MS)


def test_the_phone_asks_the_household_pool_and_confirms_with_the_board_that_previewed(tmp_path):
    """A board in a pool: the page offers the pool, asks it, and the confirm goes to the board
    named in the answer's confirm_topic (the pool has no confirm topic)."""
    from edge_agent.eval.phone_rig import PhoneRig

    rig = PhoneRig(tmp_path / "rig", pool="home")
    try:
        rig.launch_browser()
        rig.start_agent_online(0, EDGE_AGENT_MQTT__POOL="home")
        page = _open(rig, rig.new_phone())
        page.wait_for_selector("#device option[value=home]", state="attached", timeout=TIMEOUT_MS)
        assert page.locator("#device option[value=home]").inner_text() == "home (any board)"
        page.select_option("#device", "home")
        entry = _ask(page, "Remember: the bike lock code is 4417.")
        entry.locator(".preview").wait_for(timeout=TIMEOUT_MS)
        entry.get_by_role("button", name="Confirm").click()
        entry.locator(".done").wait_for(timeout=TIMEOUT_MS)
        assert entry.locator(".done").inner_text().startswith("✓")
        assert [body for _, body in rig.notes()] == ["The bike lock code is 4417."]
        asked = [r for r in rig.request_rows() if r["kind"] == "ask"]
        assert [r["pool"] for r in asked] == ["home"]  # it came through the pool's topic
        assert page.errors == []
    finally:
        rig.close()
