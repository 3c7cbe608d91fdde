"""The core: named random streams, validation, devices, atomic files, random rows."""
