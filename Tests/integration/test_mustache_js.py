"""Public/js/mustache.js in headless Chromium against the vendored Mustache spec and our extra cases.

The Swift engine (Sources/LiveActivityRendering/Templates) runs the very same files in
Tests/LiveActivityRenderingTests/MustacheSpecTests.swift, so both renderers are held to one expected output per
case: the spec's required modules (Tests/fixtures/mustache-spec) and Tests/fixtures/mustache-extra.json (number
text, falsey values, escaping of ', nesting limits, partial indentation) and the exact parse-error messages
(`name:line:column: reason`). The module is served by a real `liveactivity serve` at /js/mustache.js and loaded
with `import()` in the page, as the dashboard loads it.
"""
from __future__ import annotations

import json
from pathlib import Path

import pytest

from test_page import browser  # noqa: F401  (fixture: headless Chromium)

FIXTURES = Path(__file__).resolve().parents[1] / "fixtures"
SPEC_FILES = ["interpolation", "sections", "inverted", "comments", "delimiters", "partials"]

RUN_CASES = """
const [casesJSON, done] = [arguments[0], arguments[arguments.length - 1]];
import('/js/mustache.js').then((m) => {
  const results = JSON.parse(casesJSON).map((c) => {
    try {
      const partials = {};
      for (const [name, source] of Object.entries(c.partials || {})) partials[name] = m.compile(source, name);
      const template = m.compile(c.template, c.templateName || c.name);
      return {output: template.render(c.data, partials)};
    } catch (e) {
      return {error: String(e && e.message), templateError: e instanceof m.TemplateError,
              line: e && e.line, column: e && e.column};
    }
  });
  done(JSON.stringify(results));
}, (e) => done(JSON.stringify({importFailed: String(e)})));
"""


def load(path: Path, key: str = "tests") -> list[dict]:
    return json.loads(path.read_text(encoding="utf-8")).get(key, [])


def run_in_browser(server, driver, cases: list[dict]) -> list[dict]:
    driver.get(server.url + "/")
    driver.set_script_timeout(30)
    raw = driver.execute_async_script(RUN_CASES, json.dumps(cases))
    results = json.loads(raw)
    assert not isinstance(results, dict), f"import('/js/mustache.js') failed: {results}"
    assert len(results) == len(cases)
    return results


def mismatches(cases: list[dict], results: list[dict]) -> list[str]:
    wrong = []
    for case, result in zip(cases, results):
        if result.get("output") != case["expected"]:
            wrong.append(f"{case['file']}: {case['name']}\n  template: {case['template']!r}\n"
                         f"  expected: {case['expected']!r}\n  got:      {result!r}")
    return wrong


def test_fixtures_are_complete():
    for name in SPEC_FILES:
        assert load(FIXTURES / "mustache-spec" / f"{name}.json"), name
    assert (FIXTURES / "mustache-spec" / "LICENSE").is_file()
    assert len(load(FIXTURES / "mustache-extra.json")) > 20
    assert len(load(FIXTURES / "mustache-extra.json", "errors")) > 10


def test_spec_cases_in_chromium(server, browser):  # noqa: F811
    cases = [dict(case, file=name) for name in SPEC_FILES for case in load(FIXTURES / "mustache-spec" / f"{name}.json")]
    assert len(cases) > 100
    wrong = mismatches(cases, run_in_browser(server, browser, cases))
    assert not wrong, f"{len(wrong)} of {len(cases)} spec cases differ:\n" + "\n".join(wrong)


def test_extra_cases_in_chromium(server, browser):  # noqa: F811
    """Our own cases; the Swift suite checks the same expectations, so JS output == Swift output."""
    cases = [dict(case, file="extra") for case in load(FIXTURES / "mustache-extra.json")]
    wrong = mismatches(cases, run_in_browser(server, browser, cases))
    assert not wrong, f"{len(wrong)} of {len(cases)} extra cases differ:\n" + "\n".join(wrong)


def test_parse_errors_match_swift_word_for_word(server, browser):  # noqa: F811
    cases = [dict(case, data={}) for case in load(FIXTURES / "mustache-extra.json", "errors")]
    results = run_in_browser(server, browser, cases)
    wrong = []
    for case, result in zip(cases, results):
        if not result.get("templateError") or result.get("error") != case["error"]:
            wrong.append(f"{case['name']}: template {case['template'][:80]!r}\n  expected error: {case['error']!r}\n"
                         f"  got: {result!r}")
    assert not wrong, "\n".join(wrong)


@pytest.mark.parametrize("seed", [1, 2])
def test_random_templates_never_throw_anything_but_template_errors(server, browser, seed):  # noqa: F811
    """The JS twin of MustacheRobustnessTests: garbage compiles or fails with a TemplateError; render never throws."""
    browser.get(server.url + "/")
    browser.set_script_timeout(60)
    raw = browser.execute_async_script("""
        const [seed, done] = [arguments[0], arguments[arguments.length - 1]];
        import('/js/mustache.js').then((m) => {
          const pieces = ['{{', '}}', '{', '}', '{{{', '}}}', '#', '^', '/', '!', '>', '=', '&', '.', 'a', 'b', 'a.b',
            ' ', '\\t', '\\n', '\\r\\n', '\\r', 'é', '😀', '{{#a}}', '{{/a}}', '{{^b}}', '{{/b}}', '{{>p}}', '{{>q}}',
            '{{=<% %>=}}', '<%', '%>', '{{.}}', '{{a.b}}', '{{{a}}}', '{{& b}}', '{{! x }}', '  {{#a}}\\n',
            '  {{/a}}\\n', '  {{>p}}\\n', '=}}', '{{=', '\\u0000', '__proto__', 'constructor'];
          let state = seed;
          const next = (n) => { state = (state * 1103515245 + 12345) % 2147483648; return state % n; };
          const context = {a: [{b: '<&>'}, 1.5, true, [null]], b: {b: -0}};
          const q = m.compile('{{#a}}{{>p}}{{>q}}{{/a}}', 'q');
          let parsed = 0, failures = [];
          for (let i = 0; i < 3000; i += 1) {
            let source = '';
            for (let n = next(25); n > 0; n -= 1) source += pieces[next(pieces.length)];
            let template;
            try { template = m.compile(source, 'fuzz'); } catch (e) {
              if (!(e instanceof m.TemplateError) || !(e.line >= 1 && e.column >= 1)) failures.push([source, String(e)]);
              continue;
            }
            parsed += 1;
            try { template.render(context, {p: template, q}); } catch (e) { failures.push([source, String(e)]); }
          }
          done(JSON.stringify({parsed, failures: failures.slice(0, 5)}));
        }, (e) => done(JSON.stringify({importFailed: String(e)})));
    """, seed)
    result = json.loads(raw)
    assert "importFailed" not in result, result
    assert result["failures"] == []
    assert result["parsed"] > 100
