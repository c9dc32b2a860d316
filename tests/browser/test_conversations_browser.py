"""A conversation of three files drawn as one tree, as a person reads it (SPEC §5e): the sample
pi session, its fork and the fork's fork (sample_sessions/--home-ana-projects-report--/). Each
file's part is boxed and named, a click on a node of each part opens it, the files' own pages are
a click away, and two branches of different files compare side by side."""

from __future__ import annotations

import re

from playwright.sync_api import expect

FIRST, FORK, GRANDCHILD = "0196a1c0", "0196a1c4", "0196a1c8"


def node(page, entry_id):
    return page.locator(f'#graph g.node[id="e-{entry_id}"]')


def test_three_files_drawn_as_one_tree_each_part_opens_and_names_its_file(live_server, page, console):
    page.set_viewport_size({"width": 1280, "height": 720})
    page.goto(live_server.url + live_server.rel(FORK))
    boxes = page.locator("#graph g.cluster")
    expect(boxes).to_have_count(3)
    captions = [c.strip() for c in boxes.all_text_contents()]
    assert sum("this file (fork)" in c for c in captions) == 1 and sum(c.startswith("first file") for c in captions) == 1
    bar = page.locator("nav.conversation-bar")
    expect(bar).to_contain_text("One conversation, 3 files")
    page.screenshot(path=str(live_server.root.parent / "conversation.png"))

    # The first file's own branch: it opens here, says which file it is in, and offers a new file.
    node(page, "p0000007").locator("a").first.click()
    panel = page.locator("#node-panel")
    expect(panel).to_have_attribute("data-entry", "p0000007")
    expect(panel).to_contain_text("Write it with the csv module")
    expect(panel.locator("dl.meta a", has_text=FIRST)).to_be_visible()
    expect(panel.get_by_role("button", name="Continue in a new session")).to_be_visible()
    expect(panel.get_by_role("button", name="Fork here")).to_have_count(0)

    # The fork's own entry: written here, as before.
    node(page, "c0000007").locator("a").first.click()
    expect(panel).to_have_attribute("data-entry", "c0000007")
    expect(panel).to_contain_text("Use pandas instead")
    expect(panel.get_by_role("button", name="Fork here")).to_be_visible()

    # The grandchild's: opens too, and its file's page is a click away.
    node(page, "g0000009").locator("a").first.click()
    expect(panel).to_have_attribute("data-entry", "g0000009")
    expect(panel).to_contain_text("Also add --tsv")
    panel.locator("dl.meta a", has_text=GRANDCHILD).click()
    page.wait_for_url(re.compile(GRANDCHILD))
    expect(page.locator("#graph g.cluster")).to_have_count(3)
    expect(page.locator("#graph g.cluster", has_text="this file (fork)")).to_contain_text(GRANDCHILD[:8])
    page.screenshot(path=str(live_server.root.parent / "conversation-grandchild.png"))


def test_two_branches_of_different_files_compare_as_branches_of_one_tree(live_server, page, console):
    page.set_viewport_size({"width": 1280, "height": 720})
    page.goto(live_server.url + live_server.rel(FIRST) + "?tab=branches")
    boxes = page.locator(".compare-form input[type=checkbox][name=id]")
    expect(boxes).to_have_count(2)  # the first file's own tip and the grandchild's (the fork goes on in it)
    tips = [boxes.nth(i).get_attribute("value") for i in range(2)]
    assert set(tips) == {"p0000008", "g0000010"}
    for i in range(2):
        boxes.nth(i).check()
    page.click("text=Compare selected")
    expect(page).to_have_url(re.compile(r"/compare\?ids="))
    main = page.locator("main")
    expect(main).to_contain_text("Write it with the csv module")
    expect(main).to_contain_text("Also add --tsv")
    page.screenshot(path=str(live_server.root.parent / "conversation-compare.png"))
