"""The rewind picker: the session's user messages (newest first) with the files each turn
changed; choosing one shows what the rewind will change, then asks conversation / code /
both. Loading, the preview and the rewind itself run in thread workers; their results
come back as messages. Dismissed with the :class:`RewindResult`, or ``None``.
"""

from __future__ import annotations

from collections.abc import Callable

from rich.text import Text
from textual import on, work
from textual.app import ComposeResult
from textual.binding import Binding
from textual.containers import Vertical
from textual.message import Message
from textual.screen import ModalScreen
from textual.widgets import Footer, Label, OptionList, Static
from textual.widgets.option_list import Option

from mttui.core.rewind import RewindResult
from mttui.core.rewind_points import RewindPoint, RewindPreview
from mttui.widgets.text import literal

Apply = Callable[[int, bool, bool], RewindResult]


class RewindScreen(ModalScreen[RewindResult | None]):
    DEFAULT_CSS = """
    RewindScreen { align: center middle; background: $background 60%; }
    RewindScreen > Vertical {
        width: 90%; max-width: 110; height: 85%; padding: 1 2; background: $panel;
        border: round $primary;
    }
    RewindScreen .title { text-style: bold; margin-bottom: 1; }
    RewindScreen OptionList { height: 1fr; min-height: 5; }
    RewindScreen #rewind-preview { height: auto; max-height: 50%; margin-top: 1; }
    RewindScreen .hint { color: $text-muted; margin-top: 1; }
    """
    BINDINGS = [
        Binding("escape", "back", "Back", id="rewind.back"),
        Binding("b", "apply(True, True)", "Both", id="rewind.both"),
        Binding("c", "apply(True, False)", "Conversation", id="rewind.conversation"),
        Binding("k", "apply(False, True)", "Code", id="rewind.code"),
    ]

    class Loaded(Message):
        def __init__(self, points: list[RewindPoint]) -> None:
            super().__init__()
            self.points = points

    class Previewed(Message):
        def __init__(self, seq: int, preview: RewindPreview) -> None:
            super().__init__()
            self.seq = seq
            self.preview = preview

    class Applied(Message):
        def __init__(self, result: RewindResult) -> None:
            super().__init__()
            self.result = result

    class Failed(Message):
        def __init__(self, text: str) -> None:
            super().__init__()
            self.text = text

    def __init__(self, load: Callable[[], list[RewindPoint]],
                 preview: Callable[[int], RewindPreview], apply: Apply) -> None:
        super().__init__()
        self._load, self._preview, self._apply = load, preview, apply
        self.points: list[RewindPoint] = []
        self.chosen: RewindPreview | None = None
        self.chosen_seq: int | None = None
        self.busy = False

    def compose(self) -> ComposeResult:
        with Vertical():
            yield Label("Rewind to just before a message", classes="title")
            yield OptionList(id="rewind-points")
            yield Static("loading…", id="rewind-preview")
            yield Static("enter shows what changes · b both · c conversation only · "
                         "k code only · escape back", classes="hint")
        yield Footer()

    def on_mount(self) -> None:
        self.query_one(OptionList).focus()
        self._load_points()

    @work(thread=True, exit_on_error=False, group="rewind")
    def _load_points(self) -> None:
        try:
            self.post_message(self.Loaded(self._load()))
        except Exception as exc:  # noqa: BLE001 - shown in the picker, nothing changed
            self.post_message(self.Failed(str(exc)))

    def on_rewind_screen_loaded(self, message: Loaded) -> None:
        self.points = message.points
        options = self.query_one(OptionList)
        options.clear_options()
        for p in self.points:
            first = (p.text.strip().splitlines() or [""])[0]
            line = Text(f"#{p.seq:<4} ", style="bold")
            line.append(literal(first[:70]))
            if p.files:
                shown = ", ".join(p.files[:4]) + (" …" if len(p.files) > 4 else "")
                line.append(f"\n      {len(p.files)} file(s): {literal(shown)}", style="dim")
            elif not p.snapshot:
                line.append("\n      no file snapshot: conversation only", style="dim")
            options.add_option(Option(line, id=str(p.seq)))
        if self.points:
            options.highlighted = 0
        preview = self.query_one("#rewind-preview", Static)
        preview.update("no user messages to rewind to" if not self.points else
                       "choose a message and press enter")

    @on(OptionList.OptionSelected)
    def _selected(self, event: OptionList.OptionSelected) -> None:
        event.stop()
        if event.option.id is not None and not self.busy:
            seq = int(event.option.id)
            # chosen at once: escape goes back to the list even before the preview is read
            self.chosen, self.chosen_seq = None, seq
            self.query_one("#rewind-preview", Static).update(f"reading what a rewind to "
                                                            f"#{seq} changes…")
            self._load_preview(seq)

    @work(thread=True, exit_on_error=False, group="rewind")
    def _load_preview(self, seq: int) -> None:
        try:
            self.post_message(self.Previewed(seq, self._preview(seq)))
        except Exception as exc:  # noqa: BLE001
            self.post_message(self.Failed(str(exc)))

    def on_rewind_screen_previewed(self, message: Previewed) -> None:
        if message.seq != self.chosen_seq:
            return  # the user went back, or chose another message, meanwhile
        self.chosen = message.preview
        result = message.preview.result
        out = Text(f"Rewind to #{message.seq}\n", style="bold")
        if result is not None:
            for path in result.files_restored:
                out.append(f"  restore  {literal(path)}\n", style="green")
            for path in result.files_deleted:
                out.append(f"  delete   {literal(path)}\n", style="red")
            if not result.files_restored and not result.files_deleted:
                out.append("  no file changes\n", style="dim")
        if message.preview.stat.strip():
            out.append(literal(message.preview.stat.rstrip()) + "\n", style="dim")
        if message.preview.skipped:
            out.append("  not in the snapshot, left as they are: "
                       + literal(", ".join(message.preview.skipped)) + "\n", style="yellow")
        if message.preview.code_refused:
            out.append(literal(message.preview.code_refused) + "\n", style="yellow")
        out.append("b both · c conversation only · k code only", style="bold")
        self.query_one("#rewind-preview", Static).update(out)

    def on_rewind_screen_failed(self, message: Failed) -> None:
        self.busy = False
        if self.chosen is None:  # its preview failed: nothing is chosen
            self.chosen_seq = None
        self.query_one("#rewind-preview", Static).update(
            Text("not done: " + literal(message.text), style="red"))

    def action_apply(self, conversation: bool, code: bool) -> None:
        if self.chosen_seq is None or self.chosen is None or self.busy:
            text = ("choose a message first (enter)" if self.chosen_seq is None
                    else "reading what the rewind changes: a moment")
            self.notify(text, severity="warning")
            return
        if code and self.chosen.code_refused:
            self.notify(self.chosen.code_refused, severity="warning")
            return
        self.busy = True
        self.query_one("#rewind-preview", Static).update("rewinding…")
        self._run(self.chosen_seq, conversation, code)

    @work(thread=True, exit_on_error=False, group="rewind")
    def _run(self, seq: int, conversation: bool, code: bool) -> None:
        try:
            self.post_message(self.Applied(self._apply(seq, conversation, code)))
        except Exception as exc:  # noqa: BLE001 - the error is shown; the log says what was done
            self.post_message(self.Failed(str(exc)))

    def on_rewind_screen_applied(self, message: Applied) -> None:
        self.dismiss(message.result)

    def action_back(self) -> None:
        if self.busy:
            return  # a rewind in progress finishes first
        if self.chosen_seq is not None:
            self.chosen, self.chosen_seq = None, None
            self.query_one("#rewind-preview", Static).update("choose a message and press "
                                                            "enter")
            self.query_one(OptionList).focus()
            return
        self.dismiss(None)
