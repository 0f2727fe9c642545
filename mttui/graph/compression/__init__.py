"""History compression (compression.md): what the model sees shrinks, the transcript never.

The kept part is the most recent messages worth about 30 % of the token budget,
cut only at safe points (``cut.py``): a tool call and its results always
stay together, the kept part never starts with a tool message, and the latest
user request is always kept verbatim. The older part — with an earlier summary,
if any — is summarized by the model (in pieces when it is larger than the model
can read at once). Only once the summary exists is anything changed: a
``compression`` record is appended and the state becomes ``[summary, kept…]``.

Auto compression (``auto.py``) is its own graph node, run before every model
call, so the compressed state is checkpointed right after its record is written;
``/compact`` (``manual.py``) compresses the thread between runs. The summary
itself is made in ``summary.py``.
"""
