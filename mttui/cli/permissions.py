"""``mttui permissions [--json]`` lists rules and session grants;
``mttui permissions revoke RULE`` removes a saved project rule, and
``mttui permissions revoke TOOL --session S`` withdraws a session grant."""

from __future__ import annotations

import argparse
import sys

from mttui.session.service import SessionService

from .errors import Exit
from .options import settings_from
from .output import emit_json, table, visible


def cmd_permissions(args: argparse.Namespace, service: SessionService) -> int:
    from mttui.core.permissions import Permissions

    perms = Permissions(service, settings_from(args))
    for problem in perms.problems():  # a broken rule file: every run says so
        print(f"mttui: warning: {visible(problem)}", file=sys.stderr, flush=True)
    if getattr(args, "permissions_command", None) == "revoke":
        if args.session:
            grant = perms.revoke_grant(args.session, args.rule)
            print(visible(f"revoked: {grant.tool} asks again in session {grant.session_id}"))
        else:
            entry = perms.revoke(args.rule)
            print(visible(f"revoked: {entry.effect} {entry.rule} (project rule)"))
        return Exit.OK
    if args.json:
        emit_json(perms.as_json())
        return Exit.OK
    rules, grants = perms.rules(), perms.grants()
    if rules:
        print(visible(table(["EFFECT", "SOURCE", "RULE"],
                            [[r.effect, r.source, r.rule] for r in rules])))
    else:
        print("no permission rules (add [permissions] allow/deny to config.toml, or choose "
              '"always allow in this project" when asked)')
    print()
    if grants:
        print(visible(table(["SESSION", "GRANTED TOOL"], [[g.session_id, g.tool]
                                                          for g in grants])))
    else:
        print("no session grants")
    return Exit.OK
