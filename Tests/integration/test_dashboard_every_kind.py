"""The dashboard is for every kind (issue 27, item 7): the kind switch lists every kind the server has, and a
kind folder added while the page is open shows up; START builds its fields from the kind's schema (a picker for
an enum, numbers, a duration for the first date or date range, optionals folded away) and starts it; PAUSE /
RESUME / ±1 min appear only under activities whose kind has a countdown; the heading names the product.
Waits for states, never for time."""
from __future__ import annotations

import re
import shutil

import pytest
from selenium.webdriver.common.by import By
from selenium.webdriver.support.ui import Select

from face_support import FIXTURE_KINDS
from face_support import first
from test_page import assert_clean_console, browser, open_dashboard, wait_for  # noqa: F401 (browser: a fixture)

NO_COUNTDOWN = """import ActivityKit

struct StockTickerAttributes: ActivityAttributes {
    public struct ContentState: Codable, Hashable {
        var price: Double
        var trend: Trend
    }

    enum Trend: String, Codable, Hashable {
        case up = "Rising"
        case down = "Falling"
    }

    var symbol: String
}
"""


@pytest.fixture
def srv(start_server, tmp_path):
    kinds = tmp_path / "kinds"
    shutil.copytree(FIXTURE_KINDS, kinds)
    server = start_server("--kinds", str(kinds))
    server.kinds_dir = kinds
    return server


def kind_buttons(driver) -> list[str]:
    return [b.text for b in driver.find_elements(By.CSS_SELECTOR, ".kind-picker button") if b.is_displayed()]


def test_every_kind_can_be_started_from_its_schema(srv, browser):
    open_dashboard(browser, srv.url)
    assert browser.find_element(By.CSS_SELECTOR, "h1").text == "Live Activities" and browser.title == "Live Activities"
    wait_for("every kind in the switch", lambda: kind_buttons(browser) == [
        "Workout", "Emoji", "Delivery activity", "Pizza delivery", "Meet results"])

    browser.find_element(By.CSS_SELECTOR, '.kind-picker button[data-kind="food-delivery"]').click()
    fields = wait_for("the delivery's fields", lambda: first(browser, '.schema-fields[data-kind="food-delivery"]:not([hidden])'))
    assert not browser.find_element(By.ID, "duration").is_displayed()              # the workout's own fields go
    status = Select(fields.find_element(By.CSS_SELECTOR, 'select[name="status"]'))
    assert [o.text for o in status.options][2] == "Your courier is on the way"
    status.select_by_visible_text("Your courier is on the way")
    eta = fields.find_element(By.CSS_SELECTOR, 'input[name="estimatedDeliveryTime"]')
    assert eta.get_attribute("type") == "number" and eta.get_attribute("data-countdown") == "true"  # a duration
    eta.clear()
    eta.send_keys("25")
    optional = fields.find_element(By.CSS_SELECTOR, "details.schema-optional")
    courier = optional.find_element(By.CSS_SELECTOR, 'input[name="courierName"]')
    assert not courier.is_displayed()                                                # folded away
    optional.find_element(By.CSS_SELECTOR, "summary").click()
    courier.send_keys("Sam")
    fields.find_element(By.CSS_SELECTOR, 'input[name="restaurantName"]').send_keys("Luigi's Trattoria")
    fields.find_element(By.CSS_SELECTOR, 'input[name="orderNumber"]').send_keys("A-1042")
    fields.find_element(By.CSS_SELECTOR, 'input[name="items"]').send_keys("Margherita, Pepperoni, Cola, Tiramisu")
    price = fields.find_element(By.CSS_SELECTOR, 'input[name="totalPrice"]')
    price.clear()
    price.send_keys("38.5")
    browser.find_element(By.ID, "start").click()

    card = wait_for("the delivery's Lock Screen", lambda: first(browser, '.lock-item[data-kind="food-delivery"] .lock-screen.la-frame'))
    wait_for("its values", lambda: all(t in card.text for t in ("Your courier is on the way", "Sam", "Luigi's Trattoria")))
    countdown = card.find_element(By.CSS_SELECTOR, '[data-countdown="estimatedDeliveryTime"]')
    assert countdown.text.startswith(("25:", "24:")), countdown.text
    row = browser.find_element(By.CSS_SELECTOR, '.lock-item[data-kind="food-delivery"]')
    assert row.find_element(By.CSS_SELECTOR, "button.control-pause").is_displayed()  # it has a countdown
    assert_clean_console(browser)


def test_a_kind_added_while_the_page_is_open_shows_up_without_controls(srv, browser):
    open_dashboard(browser, srv.url)
    wait_for("the fixture kinds", lambda: "Meet results" in kind_buttons(browser))
    folder = srv.kinds_dir / "stocks"
    folder.mkdir()
    (folder / "Attributes.swift").write_text(NO_COUNTDOWN)
    wait_for("the new kind in the switch", lambda: "Stock ticker" in kind_buttons(browser), timeout=15)
    browser.find_element(By.CSS_SELECTOR, '.kind-picker button[data-kind="stocks"]').click()
    fields = wait_for("its fields", lambda: first(browser, '.schema-fields[data-kind="stocks"]:not([hidden])'))
    fields.find_element(By.CSS_SELECTOR, 'input[name="symbol"]').send_keys("AAPL")
    price = fields.find_element(By.CSS_SELECTOR, 'input[name="price"]')
    price.clear()
    price.send_keys("231.5")
    Select(fields.find_element(By.CSS_SELECTOR, 'select[name="trend"]')).select_by_visible_text("Rising")
    browser.find_element(By.ID, "start").click()
    row = wait_for("the ticker's Lock Screen", lambda: first(browser, '.lock-item[data-kind="stocks"]'))
    wait_for("its values", lambda: "Rising" in row.text and "231.5" in row.text and "AAPL" in row.text)
    # No countdown: no PAUSE / RESUME / ±1 min under it.
    assert not [b for b in row.find_elements(By.CSS_SELECTOR, "button.control") if b.is_displayed()]
    assert_clean_console(browser)


def test_a_date_range_and_nested_structs_start_from_the_dashboard(srv, browser):
    """The pizza's ClosedRange<Date> is a duration from now; the results' [Finisher] is JSON; both start."""
    open_dashboard(browser, srv.url)
    wait_for("the fixture kinds", lambda: "Meet results" in kind_buttons(browser))
    browser.find_element(By.CSS_SELECTOR, '.kind-picker button[data-kind="pizza-delivery"]').click()
    fields = wait_for("the pizza's fields", lambda: first(browser, '.schema-fields[data-kind="pizza-delivery"]:not([hidden])'))
    timer = fields.find_element(By.CSS_SELECTOR, 'input[name="deliveryTimer"]')
    assert timer.get_attribute("data-countdown") == "true" and timer.get_attribute("value") == "20"
    fields.find_element(By.CSS_SELECTOR, 'input[name="driverName"]').send_keys("Bill James")
    browser.find_element(By.ID, "start").click()
    card = wait_for("the pizza's Lock Screen", lambda: first(browser, '.lock-item[data-kind="pizza-delivery"] .la-frame'))
    wait_for("its countdown", lambda: re.fullmatch(r"(20:00|19:\d\d)", card.find_element(
        By.CSS_SELECTOR, '[data-countdown="deliveryTimer"]').text))

    browser.find_element(By.CSS_SELECTOR, '.kind-picker button[data-kind="sports-results"]').click()
    fields = wait_for("the results' fields", lambda: first(browser, '.schema-fields[data-kind="sports-results"]:not([hidden])'))
    Select(fields.find_element(By.CSS_SELECTOR, 'select[name="eventStatus"]')).select_by_visible_text("In progress")
    finishers = fields.find_element(By.CSS_SELECTOR, 'textarea[name="finishers"]')
    finishers.clear()
    finishers.send_keys('[{"place": 1, "athlete": "Maya Lopez", "school": "Riverside"}]')
    fields.find_element(By.CSS_SELECTOR, 'input[name="meetName"]').send_keys("County Championships")
    fields.find_element(By.CSS_SELECTOR, 'input[name="sport"]').send_keys("Track")
    browser.find_element(By.ID, "start").click()
    card = wait_for("the results' Lock Screen", lambda: first(browser, '.lock-item[data-kind="sports-results"] .la-frame'))
    wait_for("its rows", lambda: "Maya Lopez" in card.text and "In progress" in card.text)
    assert browser.find_element(By.ID, "error").text == ""
    assert_clean_console(browser)


def test_a_marked_activity_shows_its_reason_on_the_dashboard(srv, browser):
    """An activity whose kind's declaration changed under it (kindProblem) shows the reason above its card, not
    only in a tooltip, and offers no controls. Found by the new-user trial (it looked like any other card)."""
    from datetime import datetime, timezone
    from face_support import start_all
    from wsclient import run
    ids = run(start_all(srv.ws_url, datetime.now(timezone.utc)))
    open_dashboard(browser, srv.url)
    row = wait_for("the delivery's card", lambda: first(browser, f'.lock-item[data-activity-id="{ids["food-delivery"]}"]'))
    declaration = srv.kinds_dir / "food-delivery" / "Attributes.swift"
    text = declaration.read_text()
    declaration.write_text(text.replace("public struct ContentState: Codable, Hashable {",
                                        "public struct ContentState: Codable, Hashable {\n\t\tvar courierPhone: String", 1))
    badge = lambda: browser.execute_script("return getComputedStyle(arguments[0], '::before').content", row)
    wait_for("the mark above the card", lambda: "Marked: content.state.courierPhone" in (badge() or ""), timeout=15)
    assert not [b for b in row.find_elements(By.CSS_SELECTOR, "button.control") if b.is_displayed()]


def test_two_kinds_with_one_label_are_told_apart_in_the_switch(srv, browser):
    """A user folder declaring `WorkoutAttributes` (label "Workout", as the built-in's) shows as "Workout
    (my-workout)" beside "Workout (workout)", not as two "Workout" tabs. From the new-user trial."""
    open_dashboard(browser, srv.url)
    wait_for("the fixture kinds", lambda: "Meet results" in kind_buttons(browser))
    folder = srv.kinds_dir / "my-workout"
    folder.mkdir()
    (folder / "Attributes.swift").write_text(NO_COUNTDOWN.replace("StockTickerAttributes", "WorkoutAttributes"))
    wait_for("both workouts told apart", lambda: {"Workout (workout)", "Workout (my-workout)"} <= set(kind_buttons(browser)), timeout=15)


def open_kind_form(srv, browser, name: str = "ride", label: str = "Ride", source: str | None = None):
    """The dashboard with a kind folder `name` added while it is open (its Attributes.swift `source`, else the new
    user's ride, Tests/fixtures/declared-ride), its START fields shown: returns their container."""
    open_dashboard(browser, srv.url)
    wait_for("the fixture kinds", lambda: "Meet results" in kind_buttons(browser))
    if source is None:
        shutil.copytree(FIXTURE_KINDS.parent / "declared-ride", srv.kinds_dir / name)
    else:
        (srv.kinds_dir / name).mkdir()
        (srv.kinds_dir / name / "Attributes.swift").write_text(source)
    wait_for(f"the {name} in the switch", lambda: label in kind_buttons(browser), timeout=15)
    browser.find_element(By.CSS_SELECTOR, f'.kind-picker button[data-kind="{name}"]').click()
    return wait_for("its fields", lambda: first(browser, f'.schema-fields[data-kind="{name}"]:not([hidden])'))


def test_a_uuid_field_starts_with_a_fresh_uuid(srv, browser):
    """START's field for a required `UUID` (an identifier nobody types by hand) starts with a fresh one, editable.
    From the new-user trial (it started empty, with no way to make one)."""
    fields = open_kind_form(srv, browser)
    value = fields.find_element(By.CSS_SELECTOR, 'input[name="rideId"]').get_attribute("value")
    assert re.fullmatch(r"[0-9A-F]{8}-[0-9A-F]{4}-4[0-9A-F]{3}-[89AB][0-9A-F]{3}-[0-9A-F]{12}", value), value


def test_an_int_raw_enum_is_picked_and_shown_by_its_names_and_sent_as_its_number(srv, browser):
    """The ride's `enum Tier: Int { case standard = 1, xl = 2 }`, which no kind.json lists: START offers
    "Standard" and "XL" (it offered "1" and "2"), sends the app's 2, and the Lock Screen reads "XL" (it read "2");
    the activity keeps 2. From the new-user trial."""
    import json
    import urllib.request
    fields = open_kind_form(srv, browser)
    tier = Select(fields.find_element(By.CSS_SELECTOR, 'select[name="tier"]'))
    assert [o.text for o in tier.options] == ["Standard", "XL"]
    tier.select_by_visible_text("XL")
    fields.find_element(By.CSS_SELECTOR, 'input[name="pickupAddress"]').send_keys("1 Infinite Loop")
    browser.find_element(By.ID, "start").click()
    card = wait_for("the ride's Lock Screen", lambda: first(browser, '.lock-item[data-kind="ride"] .la-frame'))
    wait_for("its tier in words", lambda: re.search(r"Tier\s+XL", card.text))
    assert browser.find_element(By.ID, "error").text == ""
    with urllib.request.urlopen(f"{srv.url}/api/activities", timeout=5) as response:
        listed = json.loads(response.read())
    rides = [a for a in (listed["activities"] if isinstance(listed, dict) else listed) if a["attributesType"] == "ride"]
    assert [a["attributes"]["tier"] for a in rides] == [2], rides


LEVELS = """import ActivityKit

struct GaugeAttributes: ActivityAttributes {
    public struct ContentState: Codable, Hashable {
        var levels: [Level]
    }

    enum Level: Int, Codable, Hashable { case low = -3, mid, high }

    var name: String
}
"""


def test_an_array_of_an_int_raw_enum_is_sent_as_its_numbers(srv, browser):
    """START's comma-separated field for `[Level]` (an Int-raw enum) says the values it takes and sends them as
    numbers: "-3, -1" is [-3, -1] (it sent ["-3", "-1"], which the server refused). From the second new-user trial."""
    import json
    import urllib.request
    fields = open_kind_form(srv, browser, "gauge", "Gauge", LEVELS)
    levels = fields.find_element(By.CSS_SELECTOR, 'input[name="levels"]')
    assert levels.find_element(By.XPATH, "..").text.startswith("Levels (comma-separated: -3, -2, -1)")
    levels.send_keys("-3, -1")
    fields.find_element(By.CSS_SELECTOR, 'input[name="name"]').send_keys("Boiler")
    browser.find_element(By.ID, "start").click()
    wait_for("the gauge's Lock Screen", lambda: first(browser, '.lock-item[data-kind="gauge"] .la-frame'))
    assert browser.find_element(By.ID, "error").text == ""
    with urllib.request.urlopen(f"{srv.url}/api/activities", timeout=5) as response:
        listed = json.loads(response.read())
    gauges = [a for a in (listed["activities"] if isinstance(listed, dict) else listed) if a["attributesType"] == "gauge"]
    assert [a["content"]["state"]["levels"] for a in gauges] == [[-3, -1]], gauges


FLIGHT = """import ActivityKit

struct FlightAttributes: ActivityAttributes {
    public struct ContentState: Codable, Hashable {
        var gateStatus: GateStatus
        var departure: ClosedRange<Date>
        var seatsLeft: [CabinClass: Int]
    }

    enum GateStatus: Codable, Hashable {
        case onTime
        case delayed(minutes: Int)
        case boarding(group: Int, closesIn: Int)
    }

    enum CabinClass: String, Codable, Hashable { case economy, premium, business }

    var flightNumber: String
    var bookingNumber: Int64
}
"""


def test_a_keyed_enum_and_a_dictionary_start_from_an_example_and_read_in_words(srv, browser):
    """An enum whose cases carry associated values starts from a value it accepts (`{"onTime":{}}`, where `{}`
    was refused) and reads "Delayed · Minutes 25" as the status (it was left out); a `[CabinClass: Int]` (a flat
    JSON array) reads "Economy 12, Business 2" (it read "economy, 12 +2"; its keys in words since); a departure
    three hours away shows one time in the compact island, whole (it was cut to "18:05 …"). From this session's
    own look at a flight."""
    fields = open_kind_form(srv, browser, "flight", "Flight", FLIGHT)
    status = fields.find_element(By.CSS_SELECTOR, 'textarea[name="gateStatus"]')
    assert status.get_attribute("value") == '{"onTime":{}}'
    seats_box = fields.find_element(By.CSS_SELECTOR, 'textarea[name="seatsLeft"]')
    assert seats_box.get_attribute("value") == "[]"
    assert seats_box.find_element(By.XPATH, "..").text.startswith("Seats left (JSON: [key, value, …])")  # the flat form said
    fields.find_element(By.CSS_SELECTOR, 'input[name="flightNumber"]').send_keys("LH 400")
    # An Int64 beyond 2^53 is refused by the form, which would send it rounded (9007199254740992).
    booking = fields.find_element(By.CSS_SELECTOR, 'input[name="bookingNumber"]')
    booking.clear()
    booking.send_keys("9007199254740993")
    browser.find_element(By.ID, "start").click()
    wait_for("the form's refusal", lambda: "Booking number: 9007199254740993 is beyond what this form sends exactly"
             in browser.find_element(By.ID, "error").text)
    booking.clear()
    booking.send_keys("42")
    browser.find_element(By.ID, "start").click()
    card = wait_for("the flight's Lock Screen", lambda: first(browser, '.lock-item[data-kind="flight"] .la-frame'))
    wait_for("its status in words", lambda: "On time" in card.text)
    assert browser.find_element(By.ID, "error").text == ""

    status.clear()
    status.send_keys('{"delayed": {"minutes": 25}}')
    seats = fields.find_element(By.CSS_SELECTOR, 'textarea[name="seatsLeft"]')
    seats.clear()
    seats.send_keys('["economy", 12, "business", 2]')
    departure = fields.find_element(By.CSS_SELECTOR, 'input[name="departure"]')
    departure.clear()
    departure.send_keys("180")
    browser.find_element(By.ID, "start").click()
    wait_for("a second flight", lambda: len(browser.find_elements(By.CSS_SELECTOR, '.lock-item[data-kind="flight"]')) == 2)
    texts = lambda: [c.text for c in browser.find_elements(By.CSS_SELECTOR, '.lock-item[data-kind="flight"] .la-frame')]
    wait_for("the delay and the seats in words", lambda: any(
        "Delayed · Minutes 25" in t and "Economy 12, Business 2" in t for t in texts()))
    assert browser.find_element(By.ID, "error").text == ""
    # The island shows one of the two; whichever it is, its compact time is one time of day, not cut.
    trailing = wait_for("the compact island", lambda: first(browser, '.island-compact [data-kind="flight"] .trailing, .island-compact.la-frame[data-kind="flight"] .trailing'))
    wait_for("one time or a countdown", lambda: re.fullmatch(r"\d\d:\d\d|\d+:\d\d", trailing.text.strip()))
    assert browser.execute_script("return arguments[0].scrollWidth <= arguments[0].clientWidth + 1", trailing)
    assert_clean_console(browser)
