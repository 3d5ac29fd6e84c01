"""stride.config: Config attribute access, merge_config, compile_config on the CartPole DQN zoo config,
the three saved files, and experiment folders that are never overwritten."""

from __future__ import annotations

import copy
import json
import math
import os
import re

import pytest

from stride.config import REQUIRED, Config, compile_config, load_json_config, merge_config
from stride.utils.errors import ConfigError
from stride.zoo.cartpole.config import cartpole_dqn_config as zoo


def _main():
    return copy.deepcopy(zoo.main_config)


def _create():
    return copy.deepcopy(zoo.create_config)


def _with(base: dict, patch: dict) -> dict:
    """``base`` deep-updated by ``patch`` (plain dicts, no validation)."""
    out = copy.deepcopy(base)
    for k, v in patch.items():
        if isinstance(v, dict) and isinstance(out.get(k), dict) and v:
            out[k] = _with(out[k], v)
        else:
            out[k] = copy.deepcopy(v)
    return out


def _without(base: dict, dotted: str) -> dict:
    out = copy.deepcopy(base)
    node = out
    parts = dotted.split(".")
    for p in parts[:-1]:
        node = node[p]
    del node[parts[-1]]
    return out


# ---- Config ---------------------------------------------------------------------------------------
class TestConfig:
    def test_attribute_access_reads_and_writes_nested_keys(self):
        c = Config({"a": {"b": 1}, "x": [1, 2]})
        assert isinstance(c.a, Config)
        assert c.a.b == 1 and c["a"]["b"] == 1
        c.a.b = 5
        assert c["a"]["b"] == 5
        c.new = {"k": 2}  # a plain dict assigned later also becomes a Config
        assert isinstance(c["new"], Config) and c.new.k == 2

    def test_mistyped_attribute_names_closest_key(self):
        c = Config({"learning_rate": 0.1, "batch_size": 4})
        with pytest.raises(AttributeError, match=r"no key 'learning_rat'.*did you mean 'learning_rate'"):
            _ = c.learning_rat
        assert not hasattr(c, "nothing_close_here")
        assert "nothing_close_here" not in c  # reading never creates a key

    def test_deepcopy_and_to_dict(self):
        c = Config({"a": {"b": [1, 2]}})
        d = copy.deepcopy(c)
        assert isinstance(d, Config) and isinstance(d.a, Config)
        d.a.b.append(3)
        assert c.a.b == [1, 2]
        plain = c.to_dict()
        assert type(plain) is dict and type(plain["a"]) is dict and plain == {"a": {"b": [1, 2]}}


# ---- merge_config ---------------------------------------------------------------------------------
class TestMergeConfig:
    DEFAULT = {"lr": 0.1, "n": 3, "flag": False, "name": "x", "sizes": [1, 2], "sub": {"a": 1, "b": {"c": 2}},
               "free": {}, "opt": None}

    def test_user_wins_and_defaults_are_kept(self):
        out = merge_config(self.DEFAULT, {"lr": 0.5, "sub": {"b": {"c": 7}}})
        assert out.lr == 0.5 and out.sub.b.c == 7
        assert out.n == 3 and out.sub.a == 1 and out.flag is False and out.sizes == [1, 2]

    def test_inputs_are_not_mutated(self):
        default, user = copy.deepcopy(self.DEFAULT), {"sub": {"a": 9}, "sizes": [5]}
        merge_config(default, user)
        assert default == self.DEFAULT and user == {"sub": {"a": 9}, "sizes": [5]}

    def test_unknown_key_names_full_dotted_key_and_closest(self):
        with pytest.raises(ConfigError) as e:
            merge_config(self.DEFAULT, {"sub": {"b": {"cc": 1}}})
        msg = str(e.value)
        assert "'sub.b.cc'" in msg
        assert re.search(r"did you mean '(sub\.b\.)?c'", msg)

    def test_unknown_key_without_close_match_lists_valid_keys(self):
        with pytest.raises(ConfigError) as e:
            merge_config(self.DEFAULT, {"zzzzzz": 1})
        msg = str(e.value)
        assert "'zzzzzz'" in msg and "did you mean" not in msg
        for k in ("lr", "n", "sub", "free"):
            assert k in msg

    @pytest.mark.parametrize("key,value", [("lr", "fast"), ("n", 2.5), ("n", "3"), ("flag", 1), ("name", 3),
                                           ("sizes", "ab"), ("sub", 5)])
    def test_type_errors(self, key, value):
        with pytest.raises(ConfigError, match=re.escape(f"'{key}'")):
            merge_config(self.DEFAULT, {key: value})

    @pytest.mark.parametrize("key,value", [("lr", 1), ("n", 4.0), ("n", float("inf")), ("opt", "anything"),
                                           ("flag", True), ("sizes", (3, 4)), ("lr", None)])
    def test_compatible_values_accepted(self, key, value):
        assert merge_config(self.DEFAULT, {key: value})[key] == value

    def test_free_form_empty_dict_default_accepts_any_keys(self):
        out = merge_config(self.DEFAULT, {"free": {"anything": 1, "nested": {"x": 2}}})
        assert out.free.anything == 1 and out.free.nested.x == 2


# ---- compile_config ------------------------------------------------------------------------------
class TestCompileConfig:
    def test_main_configs_manager_type_picks_the_defaults(self):
        """``--set env.manager.type=...`` writes the main config: that manager's keys, not create_config's."""
        create = _with(_create(), {"env_manager": {"type": "subprocess"}})
        assert "shared_memory" in compile_config(_main(), create, save_cfg=False).env.manager
        cfg = compile_config(_with(_main(), {"env": {"manager": {"type": "base"}}}), create, save_cfg=False)
        assert cfg.env.manager.type == "base" and "shared_memory" not in cfg.env.manager

    def test_defaults_of_every_component_present(self):
        cfg = compile_config(_main(), _create(), save_cfg=False, seed=7)
        assert cfg.seed == 7
        # env + manager
        assert cfg.env.type == "gymnasium" and cfg.env.env_id == "CartPole-v1"
        assert cfg.env.manager.type == "base" and cfg.env.manager.max_retry >= 1
        assert "retry_type" in cfg.env.manager and math.isinf(cfg.env.manager.episode_num)
        # policy defaults merged under the user's values
        p = cfg.policy
        assert p.type == "dqn" and p.on_policy is False and p.priority is False
        assert p.learn.target_update_type == "assign" and p.learn.loss_type == "mse"
        zm = zoo.main_config["policy"]
        assert p.learn.update_per_collect == zm["learn"]["update_per_collect"]  # the user's value wins
        assert p.learn.grad_clip_norm is None  # DQN default kept where the user says nothing
        assert p.other.eps.decay == zoo.main_config["policy"]["other"]["eps"]["decay"] and "end" in p.other.eps
        # model: DQN's signature defaults + user's
        assert p.model.obs_shape == zm["model"]["obs_shape"] and p.model.action_shape == zm["model"]["action_shape"]
        assert p.model.head_layer_num == zm["model"].get("head_layer_num", 1)  # the user's value, else the signature's
        assert "activation" not in zm["model"] and p.model.activation == "relu"  # a signature default
        # collector / evaluator / learner / buffer
        assert p.collect.collector.type == "sample" and "collect_print_freq" in p.collect.collector
        assert p.eval.evaluator.eval_freq_envstep == zm["eval"]["evaluator"]["eval_freq_envstep"]
        assert p.eval.evaluator.confirm_episode == zm["eval"]["evaluator"]["confirm_episode"]
        assert p.eval.evaluator.eval_freq == 1000  # the evaluator's default, unused when eval_freq_envstep is set
        ze = zoo.main_config["env"]
        assert p.eval.evaluator.stop_value == ze["stop_value"] == cfg.env.stop_value
        assert p.eval.evaluator.n_episode == ze["n_evaluator_episode"] == cfg.env.n_evaluator_episode
        assert p.learn.learner.hook.save_ckpt_after_iter == zm["learn"]["learner"]["hook"]["save_ckpt_after_iter"]
        assert "log_show_after_iter" in p.learn.learner.hook and "load_ckpt_before_run" in p.learn.learner.hook
        assert p.other.replay_buffer.type == "naive"
        assert p.other.replay_buffer.replay_buffer_size == zm["other"]["replay_buffer"]["replay_buffer_size"]
        assert "min_sample_size" in p.other.replay_buffer

    def test_does_not_mutate_user_config(self):
        main, create = _main(), _create()
        compile_config(main, create, save_cfg=False)
        assert main == zoo.main_config and create == zoo.create_config

    @pytest.mark.parametrize("dotted", ["env.stop_value", "env.n_evaluator_episode"])
    def test_required_key_missing(self, dotted):
        with pytest.raises(ConfigError, match=re.escape(dotted)):
            compile_config(_without(_main(), dotted), _create(), save_cfg=False)

    def test_exactly_one_of_n_sample_n_episode(self):
        with pytest.raises(ConfigError, match="n_sample.*n_episode"):
            compile_config(_without(_main(), "policy.collect.n_sample"), _create(), save_cfg=False)
        with pytest.raises(ConfigError, match="n_sample.*n_episode"):
            compile_config(_with(_main(), {"policy": {"collect": {"n_episode": 4}}}), _create(), save_cfg=False)

    def test_n_episode_alone_is_accepted(self):
        main = _with(_main(), {"policy": {"collect": {"n_sample": None, "n_episode": 8}}})
        cfg = compile_config(main, _create(), save_cfg=False)
        assert cfg.policy.collect.n_episode == 8 and cfg.policy.collect.n_sample is None

    def test_n_episode_selects_episode_collector(self):
        main = _with(_main(), {"policy": {"collect": {"n_sample": None, "n_episode": 8}}})
        cfg = compile_config(main, _create(), save_cfg=False)
        assert cfg.policy.collect.collector.type == "episode"

    def test_zero_n_sample_refused(self):
        with pytest.raises(ConfigError, match="n_sample"):
            compile_config(_with(_main(), {"policy": {"collect": {"n_sample": 0}}}), _create(), save_cfg=False)

    def test_int_for_hidden_size_list_is_a_config_error(self):
        from stride.policy import DQNPolicy
        from stride.utils.errors import StrideError

        main = _with(_main(), {"policy": {"model": {"encoder_hidden_size_list": 64}}})
        with pytest.raises(StrideError, match="encoder_hidden_size_list"):
            DQNPolicy(compile_config(main, _create(), save_cfg=False).policy)

    def test_top_level_typo_did_you_mean(self):
        main = _main()
        main["policy"]["lern"] = {}
        with pytest.raises(ConfigError) as e:
            compile_config(main, _create(), save_cfg=False)
        msg = str(e.value)
        assert "'policy.lern'" in msg and re.search(r"did you mean '(policy\.)?learn'", msg)

    @pytest.mark.parametrize("patch,bad,hint", [
        ({"policy": {"learn": {"batch_sise": 3}}}, "policy.learn.batch_sise", "batch_size"),
        ({"policy": {"model": {"obs_shap": 4}}}, "policy.model.obs_shap", "obs_shape"),
        ({"env": {"stop_valu": 1}}, "env.stop_valu", "stop_value"),
        ({"policy": {"other": {"replay_buffer": {"replay_buffer_sise": 3}}}},
         "policy.other.replay_buffer.replay_buffer_sise", "replay_buffer_size"),
        ({"env": {"manager": {"max_retri": 3}}}, "env.manager.max_retri", "max_retry"),
    ])
    def test_nested_typos_did_you_mean(self, patch, bad, hint):
        with pytest.raises(ConfigError) as e:
            compile_config(_with(_main(), patch), _create(), save_cfg=False)
        msg = str(e.value)
        assert f"'{bad}'" in msg and "did you mean" in msg and hint in msg

    def test_wrong_type_refused(self):
        with pytest.raises(ConfigError, match=r"policy\.learn\.batch_size"):
            compile_config(_with(_main(), {"policy": {"learn": {"batch_size": "64"}}}), _create(), save_cfg=False)

    def test_unknown_policy_type_names_choices(self):
        create = _create()
        create["policy"]["type"] = "dqm"
        with pytest.raises(ConfigError, match=r"'dqm'.*did you mean 'dqn'.*valid choices: .*dqn"):
            compile_config(_main(), create, save_cfg=False)


# ---- saving ---------------------------------------------------------------------------------------
class TestSaveConfig:
    def test_three_files_written_and_valid(self, tmp_path, monkeypatch):
        monkeypatch.chdir(tmp_path)
        cfg = compile_config(_main(), _create(), save_cfg=True, seed=3)
        exp = tmp_path / cfg.exp_name
        assert sorted(os.listdir(exp)) == ["formatted_total_config.py", "total_config.json", "total_config.py"]
        # total_config.py: valid Python holding the whole config (inf included)
        ns: dict = {}
        exec((exp / "total_config.py").read_text(), ns)
        assert ns["exp_config"] == cfg.to_dict()
        assert math.isinf(ns["exp_config"]["env"]["manager"]["episode_num"])
        # formatted_total_config.py: main_config/create_config that compile to the same config
        ns2: dict = {}
        exec((exp / "formatted_total_config.py").read_text(), ns2)
        again = compile_config(ns2["main_config"], ns2["create_config"], save_cfg=False, seed=3)
        assert again.to_dict() == cfg.to_dict()
        assert ns2["create_config"]["policy"]["type"] == "dqn"
        # total_config.json: data only, round trip including inf
        text = (exp / "total_config.json").read_text()
        json.loads(text)  # plain JSON (no NaN/Infinity literals needed)
        assert "Infinity" not in text
        loaded = load_json_config(str(exp / "total_config.json"))
        assert isinstance(loaded, Config)
        assert loaded.to_dict() == cfg.to_dict()
        assert math.isinf(loaded.env.manager.episode_num)
        assert not [f for f in os.listdir(exp) if "tmp" in f]

    def test_formatted_config_round_trip_of_a_modified_config(self, tmp_path, monkeypatch):
        monkeypatch.chdir(tmp_path)
        main = _with(_main(), {"exp_name": "mod", "env": {"make_kwargs": {"max_episode_steps": 77}},
                               "policy": {"nstep": 3, "collect": {"n_sample": None, "n_episode": 8},
                                          "learn": {"target_update_type": "momentum", "target_theta": 0.01},
                                          "model": {"encoder_hidden_size_list": [32, 16], "dueling": False}}})
        cfg = compile_config(main, _create(), save_cfg=True, seed=11)
        ns: dict = {}
        exec((tmp_path / cfg.exp_name / "formatted_total_config.py").read_text(), ns)
        again = compile_config(ns["main_config"], ns["create_config"], save_cfg=False, seed=11)
        assert again.to_dict() == cfg.to_dict()
        assert again.policy.collect.collector.type == cfg.policy.collect.collector.type
        assert load_json_config(str(tmp_path / cfg.exp_name / "total_config.json")).to_dict() == cfg.to_dict()

    def test_existing_experiment_folder_never_overwritten(self, tmp_path, monkeypatch):
        monkeypatch.chdir(tmp_path)
        first = compile_config(_main(), _create(), save_cfg=True, seed=1)
        before = {f: (tmp_path / first.exp_name / f).read_bytes() for f in os.listdir(tmp_path / first.exp_name)}
        second = compile_config(_with(_main(), {"policy": {"learn": {"batch_size": 32}}}), _create(), save_cfg=True,
                                seed=2)
        third = compile_config(_main(), _create(), save_cfg=True, seed=3)
        assert len({first.exp_name, second.exp_name, third.exp_name}) == 3
        after = {f: (tmp_path / first.exp_name / f).read_bytes() for f in os.listdir(tmp_path / first.exp_name)}
        assert after == before
        assert load_json_config(str(tmp_path / second.exp_name / "total_config.json")).policy.learn.batch_size == 32

    def test_exp_name_argument(self, tmp_path, monkeypatch):
        monkeypatch.chdir(tmp_path)
        cfg = compile_config(_main(), _create(), save_cfg=True, exp_name="my_run")
        assert cfg.exp_name == "my_run" and (tmp_path / "my_run" / "total_config.json").is_file()

    def test_save_cfg_false_writes_nothing(self, tmp_path, monkeypatch):
        monkeypatch.chdir(tmp_path)
        compile_config(_main(), _create(), save_cfg=False)
        assert os.listdir(tmp_path) == []


def test_required_marker_is_a_string_constant():
    # REQUIRED defaults are reported by compile_config, never leak as values
    cfg = compile_config(_main(), _create(), save_cfg=False)
    flat = json.dumps(cfg.to_dict(), default=str)
    assert REQUIRED not in flat


def test_section_and_type_name_narrow_a_config_tree():
    from stride.config.config import section, type_name
    from stride.utils.errors import ConfigError

    tree = {"env": {"type": "gymnasium"}, "none": None, "bad": 3, "odd": {"type": 1}}
    assert section(tree, "env") == {"type": "gymnasium"} and section(tree, "none") == {} and section(tree, "x") == {}
    assert type_name(tree, "env") == "gymnasium" and type_name(tree, "x") is None
    with pytest.raises(ConfigError, match="'bad' must be a dict"):
        section(tree, "bad")
    with pytest.raises(ConfigError, match="'odd.type' must be a registered name"):
        type_name(tree, "odd")
