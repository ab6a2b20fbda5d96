"""The ceiling measure's report groups the held-out pretraining templates by their app's kind and origin."""

from benchmarks.base_ceiling import pretraining_group
from phonesim.pretrain import HELD_OUT_APPS, PHONES


def test_held_out_pretraining_templates_are_grouped_by_kind_and_origin():
    groups = {pretraining_group(f"{app}.open_prefs") for app in HELD_OUT_APPS}
    assert {"collection:handmade", "collection:generated", "timed:handmade", "timed:generated"} <= groups
    assert pretraining_group("trails.open_item") == "collection:handmade" and "trails" in PHONES["handmade"]
    assert pretraining_group(f"{PHONES['timed3'][0]}.add") == "timed:generated"
