"""Bridges between a call and voice agents outside this process (docs/services.md, issue 17).

``served``: one call's own twins on a loopback port, with the call's request log;
``trace``: the tool trace rebuilt from that log for the grader;
``audio``: the audio plumbing the bridges share (resampling, PCM16 and mu-law bytes, playback).
"""
