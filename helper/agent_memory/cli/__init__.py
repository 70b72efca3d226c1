"""The command line: one module per command (see `commands.TABLE`), each declaring its own arguments and rendering
its result; `render` and `failures` are what they share."""
