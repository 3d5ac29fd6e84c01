import pytest

from stride.utils.extras import MissingExtraError, import_extra


def test_present_module_is_returned():
    import json

    assert import_extra("json", "none") is json


def test_missing_module_names_the_extra_in_one_line():
    with pytest.raises(MissingExtraError) as e:
        import_extra("stride_no_such_pkg.sub", "atari", what="Atari envs")
    msg = str(e.value)
    assert msg == 'Atari envs need stride_no_such_pkg.sub: pip install "stride-rl[atari]"'
    assert "\n" not in msg and e.value.exit_code == 1


def test_a_broken_dependency_of_a_present_module_is_not_masked(tmp_path, monkeypatch):
    (tmp_path / "stride_fake_extra.py").write_text("import stride_missing_dependency_xyz\n")
    monkeypatch.syspath_prepend(str(tmp_path))
    with pytest.raises(ModuleNotFoundError, match="stride_missing_dependency_xyz"):
        import_extra("stride_fake_extra", "fake")


def test_without_what_the_line_names_the_module():
    with pytest.raises(MissingExtraError, match=r'^stride_no_such_pkg is not installed: pip install "stride-rl\[x\]"$'):
        import_extra("stride_no_such_pkg", "x")
