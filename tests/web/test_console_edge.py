"""A settings change in the console that moves the house's edge out of bounds: the group
page shows the odds the table would have and saves nothing; its "anyway" button sends the
change again confirmed, and then it is saved and audited, as ``/set ... confirm``."""

from __future__ import annotations

import html

from tests.helpers.console import GROUP, Console
from tests.helpers.game import ADMIN


async def test_a_rake_past_the_limit_is_saved_only_once_confirmed(console: Console) -> None:
    await console.sign_in(ADMIN.id)
    csrf = await console.csrf(f"/console/groups/{GROUP}")
    form = {"csrf": csrf, "key": "rake", "value": "6%"}
    response = await console.client.post(f"/console/groups/{GROUP}/settings", data=form)
    page = await response.text()
    assert response.status == 409
    assert 'id="edge-warning"' in page and 'id="saved"' not in page
    assert "the house takes 43.38% of every stake on average, more than 20%" in page
    assert "<dt>House edge (rake less rebates)</dt><dd>+43.38% of the stake</dd>" in page
    assert 'name="confirm" value="yes"' in page
    assert 'id="set-rake" name="value" value="6%"' in page  # what was typed, kept
    assert (await console.service.settings(GROUP)).rake_bps == 500
    assert all(line.action != "set" for line in await console.service.audit_log(GROUP, 50))

    response = await console.client.post(
        f"/console/groups/{GROUP}/settings", data={**form, "confirm": "yes"}
    )
    page = await response.text()
    assert response.status == 200 and "Saved rake." in page
    assert 'id="edge-warning"' not in page
    assert (await console.service.settings(GROUP)).rake_bps == 600
    audit = await console.service.audit_log(GROUP, 1)
    assert audit[0].details == {"setting": "rake", "old": "5%", "new": "6%"}


async def test_the_house_dealing_niu_niu_poker_is_warned_of_in_the_console(
    console: Console,
) -> None:
    await console.service.change_setting(GROUP, ADMIN, "ruleset", "poker29")
    await console.sign_in(ADMIN.id)
    csrf = await console.csrf(f"/console/groups/{GROUP}")
    response = await console.client.post(
        f"/console/groups/{GROUP}/settings",
        data={"csrf": csrf, "key": "dealer", "value": "house"},
    )
    page = await response.text()
    assert response.status == 409
    why = "With dealer house the table pays out more than it takes in: the house loses 30.31%"
    assert html.escape(why) in page
    assert "<dt>Player's bet</dt><dd>+30.31% of the stake</dd>" in page
    assert (await console.service.settings(GROUP)).dealer == "bid"
    # A change that keeps the edge in bounds is saved at once.
    response = await console.client.post(
        f"/console/groups/{GROUP}/settings",
        data={"csrf": csrf, "key": "loss_pays", "value": "dealer"},
    )
    assert response.status == 200 and "Saved loss_pays." in await response.text()
