#!/usr/bin/python3
"""A tiny GTK window that offers one folder as `text/uri-list` when dragged.

The e2e test starts it under Xvfb, then moves the real X pointer with
xdotool from this window onto the app, so the drop goes through the OS drag
and drop, GTK and Tauri's `DragDropEvent::Drop` like a user's would.
Usage: drag_source.py FOLDER X Y (the window's top-left corner).
Runs with Debian's /usr/bin/python3, which has `gi` (TAURI-NOTES.md pitfall 8).
"""

import pathlib
import sys

import gi

gi.require_version("Gtk", "3.0")
gi.require_version("Gdk", "3.0")
from gi.repository import Gdk, Gtk  # noqa: E402

SIZE = 160  # pixels; the test drags from the window's centre

uri = pathlib.Path(sys.argv[1]).resolve().as_uri()
window = Gtk.Window(title="loupe-drag-source")
window.set_default_size(SIZE, SIZE)
window.move(int(sys.argv[2]), int(sys.argv[3]))
button = Gtk.Button(label="drag me")
button.drag_source_set(Gdk.ModifierType.BUTTON1_MASK, [], Gdk.DragAction.COPY)
button.drag_source_add_uri_targets()
button.connect("drag-data-get", lambda _w, _ctx, data, _info, _time: data.set_uris([uri]))
window.add(button)
window.connect("destroy", Gtk.main_quit)
window.connect("map-event", lambda *_: print("ready", flush=True))
window.show_all()
Gtk.main()
