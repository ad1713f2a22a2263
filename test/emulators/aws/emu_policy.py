"""The actions of the IAM policy docs/providers/aws.md tells operators to attach (its first JSON block), for the tests
that check the provider calls nothing beyond it: the document is the one list, so a new call fails those tests until
the policy users are given allows it."""
import json
import os
import re

DOC = os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "..", "..", "docs", "providers", "aws.md")


def documented_actions(doc=DOC):
    """The set of action names (without the service prefix) the documented policy allows."""
    with open(doc, encoding="utf-8") as f:
        block = re.search(r"^```json\n(.*?)^```", f.read(), re.S | re.M)
    if not block:
        raise ValueError("%s: no ```json block holding the IAM policy" % doc)
    actions = set()
    for statement in json.loads(block.group(1))["Statement"]:
        names = statement["Action"]
        for name in [names] if isinstance(names, str) else names:
            actions.add(name.split(":", 1)[1])
    return actions
