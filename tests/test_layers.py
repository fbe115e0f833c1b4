import numpy as np
import pytest
import keras

from tsattn.errors import ConfigError
from tsattn.layers import (AdditiveAttention, BahdanauAttention, HalvingSchedule, InterpretableAttention,
                           LuongAttention, MultiHeadSelfAttention, PositionalEncoding, TransformerEncoderBlock,
                           VariableSelection, WarmupSchedule,
                           scaled_dot_product_attention, sinusoidal_encoding)

RNG = np.random.default_rng(0)


def softmax(x, axis=-1):
    e = np.exp(x - x.max(axis=axis, keepdims=True))
    return e / e.sum(axis=axis, keepdims=True)


def test_additive_attention_matches_numpy():
    h = RNG.normal(size=(4, 5, 3)).astype("float32")
    layer = AdditiveAttention()
    layer.build(h.shape)
    W, b = RNG.normal(size=(3, 1)), RNG.normal(size=(5, 1))
    layer.set_weights([W, b])
    context, weights = layer(h, return_attention_scores=True)
    e = np.tanh(h @ W + b)[..., 0]  # (batch, window)
    a = softmax(e)
    np.testing.assert_allclose(weights, a, rtol=1e-5, atol=1e-6)
    np.testing.assert_allclose(context, (h * a[..., None]).sum(axis=1), rtol=1e-5, atol=1e-6)
    np.testing.assert_allclose(np.asarray(weights).sum(axis=1), 1.0, rtol=1e-6)
    assert [w.shape for w in layer.weights] == [(3, 1), (5, 1)]


def test_bahdanau_attention_matches_numpy():
    h = RNG.normal(size=(2, 6, 4)).astype("float32")
    layer = BahdanauAttention(attention_units=3)
    layer.build(h.shape)
    W1, W2, v = RNG.normal(size=(4, 3)), RNG.normal(size=(4, 3)), RNG.normal(size=(3, 1))
    layer.set_weights([W1, W2, v])
    context, weights = layer(h, return_attention_scores=True)
    score = (np.tanh(h @ W1 + (h[:, -1, :] @ W2)[:, None, :]) @ v)[..., 0]
    a = softmax(score)
    np.testing.assert_allclose(weights, a, rtol=1e-5, atol=1e-6)
    np.testing.assert_allclose(context, (h * a[..., None]).sum(axis=1), rtol=1e-5, atol=1e-6)


@pytest.mark.parametrize("score", ["dot", "general"])
def test_luong_attention_matches_numpy(score):
    h = RNG.normal(size=(2, 6, 4)).astype("float32")
    layer = LuongAttention(score)
    layer.build(h.shape)
    last = h[:, -1, :]
    if score == "general":
        W = RNG.normal(size=(4, 4))
        layer.set_weights([W])
        raw = np.einsum("btu,uv,bv->bt", h, W, last)  # h_t^T W h_T
    else:
        raw = np.einsum("btu,bu->bt", h, last)
    context, weights = layer(h, return_attention_scores=True)
    a = softmax(raw)
    np.testing.assert_allclose(weights, a, rtol=1e-4, atol=1e-6)
    np.testing.assert_allclose(context, (h * a[..., None]).sum(axis=1), rtol=1e-4, atol=1e-5)


def test_scaled_dot_product_attention_matches_numpy():
    q, k, v = (RNG.normal(size=(2, 3, 5, 4)).astype("float32") for _ in range(3))
    output, weights = scaled_dot_product_attention(q, k, v)
    expected_weights = softmax(q @ np.swapaxes(k, -1, -2) / np.sqrt(4))
    np.testing.assert_allclose(weights, expected_weights, rtol=1e-5, atol=1e-6)
    np.testing.assert_allclose(output, expected_weights @ v, rtol=1e-5, atol=1e-6)
    mask = np.tril(np.ones((5, 5), dtype=bool))
    _, masked = scaled_dot_product_attention(q, k, v, mask)
    assert np.allclose(np.asarray(masked)[..., ~mask], 0.0)
    # residual attention: an earlier block's scores are added before the softmax, and the sum is passed on
    previous = RNG.normal(size=(2, 3, 5, 5)).astype("float32")
    own = q @ np.swapaxes(k, -1, -2) / np.sqrt(4)
    _, carried, scores = scaled_dot_product_attention(q, k, v, previous_scores=previous, return_scores=True)
    np.testing.assert_allclose(scores, own + previous, rtol=1e-5, atol=1e-5)
    np.testing.assert_allclose(carried, softmax(own + previous), rtol=1e-5, atol=1e-6)


def test_multi_head_self_attention_matches_numpy():
    x = RNG.normal(size=(2, 5, 8)).astype("float32")
    layer = MultiHeadSelfAttention(num_heads=2, key_dim=4)
    layer.build(x.shape)
    weights = [RNG.normal(size=w.shape) * 0.3 for w in layer.get_weights()]
    layer.set_weights(weights)
    wq, bq, wk, bk, wv, bv, wo, bo = weights

    def heads(t):
        return t.reshape(2, 5, 2, 4).transpose(0, 2, 1, 3)

    q, k, v = heads(x @ wq + bq), heads(x @ wk + bk), heads(x @ wv + bv)
    a = softmax(q @ k.transpose(0, 1, 3, 2) / 2.0)
    expected = (a @ v).transpose(0, 2, 1, 3).reshape(2, 5, 8) @ wo + bo
    output, scores = layer(x, return_attention_scores=True)
    np.testing.assert_allclose(scores, a, rtol=1e-4, atol=1e-5)
    np.testing.assert_allclose(output, expected, rtol=1e-4, atol=1e-4)


def test_positional_encoding_check_figure():
    expected = [[0, 1, 0, 1], [0.84147098, 0.54030231, 0.09983342, 0.99500417],
                [0.90929743, -0.41614684, 0.19866933, 0.98006658], [0.14112001, -0.9899925, 0.29552021, 0.95533649]]
    np.testing.assert_allclose(sinusoidal_encoding(4, 4, 100), expected, atol=1e-8)
    layer = PositionalEncoding(n=100)
    zeros = np.zeros((1, 4, 4), dtype="float32")
    np.testing.assert_allclose(layer(zeros)[0], expected, atol=1e-6)
    assert layer.trainable_weights == []  # fixed, not trained
    learned = PositionalEncoding("learned")
    learned.build((None, 4, 4))
    assert [w.shape for w in learned.trainable_weights] == [(4, 4)]
    odd = sinusoidal_encoding(3, 5)
    assert odd.shape == (3, 5) and odd[0].tolist() == [0, 1, 0, 1, 0]


def test_encoder_block_shapes_symbolic_and_eager():
    block = TransformerEncoderBlock(d_model=8, num_heads=2, ff_dim=16, dropout=0.1, causal=True)
    symbolic = keras.Input((6, 8))
    out, scores = block(symbolic, return_attention_scores=True)
    assert tuple(out.shape) == (None, 6, 8) and tuple(scores.shape) == (None, 2, 6, 6)
    eager_out, eager_scores = block(np.ones((3, 6, 8), "float32"), return_attention_scores=True)
    assert eager_out.shape == (3, 6, 8) and eager_scores.shape == (3, 2, 6, 6)
    # causal: step k attends only to steps <= k
    assert np.allclose(np.triu(np.asarray(eager_scores)[0, 0], k=1), 0.0)


def test_encoder_block_batch_norm_and_residual_attention():
    """norm="batch" normalises each feature over the batch and the tokens in training (moving statistics after);
    residual attention adds the previous block's scores, so a second block's weights change with them."""
    x = RNG.normal(size=(16, 6, 8)).astype("float32") * 3 + 1
    block = TransformerEncoderBlock(8, 2, 16, norm="batch")
    out, weights, scores = block(x, training=True, return_attention_scores=True, return_scores=True)
    flat = np.asarray(out).reshape(-1, 8)
    np.testing.assert_allclose(flat.mean(axis=0), 0.0, atol=1e-4)  # BatchNorm's gamma 1, beta 0 at the start
    np.testing.assert_allclose(flat.std(axis=0), 1.0, atol=1e-2)
    assert [w.name for w in block.non_trainable_weights].count("moving_mean") == 2  # one per norm
    second = TransformerEncoderBlock(8, 2, 16)
    _, alone = second(np.asarray(out), return_attention_scores=True)
    _, carried = second(np.asarray(out), previous_scores=scores, return_attention_scores=True)
    assert not np.allclose(alone, carried) and np.allclose(np.asarray(carried).sum(-1), 1.0, atol=1e-5)


@pytest.mark.parametrize("layer", [
    AdditiveAttention(name="a"), BahdanauAttention(5, name="b"), LuongAttention("general", name="c"),
    PositionalEncoding("learned", n=50.0, name="d"), MultiHeadSelfAttention(2, 3, causal=True, name="e"),
    TransformerEncoderBlock(8, 2, 16, 0.2, True, name="f"), TransformerEncoderBlock(8, 2, 16, norm="batch", name="g"),
])
def test_layer_config_round_trip(layer):
    config = layer.get_config()
    clone = type(layer).from_config(config)
    assert clone.get_config() == config
    x = RNG.normal(size=(2, 4, 8)).astype("float32")
    first = layer(x)
    clone(x)
    clone.set_weights(layer.get_weights())
    np.testing.assert_allclose(clone(x), first, rtol=1e-6)


def test_warmup_schedule_values_and_serialisation():
    schedule = WarmupSchedule(1e-3, warmup_steps=10, decay="inverse_sqrt")
    rates = [float(schedule(step)) for step in (0, 4, 9, 39)]
    np.testing.assert_allclose(rates, [1e-4, 5e-4, 1e-3, 1e-3 * np.sqrt(10 / 40)], rtol=1e-5)
    cosine = WarmupSchedule(1e-3, warmup_steps=10, decay="cosine", decay_steps=110, min_learning_rate=1e-5)
    np.testing.assert_allclose([float(cosine(9)), float(cosine(59)), float(cosine(500))],
                               [1e-3, 1e-5 + (1e-3 - 1e-5) * 0.5, 1e-5], rtol=1e-4)
    restored = keras.saving.deserialize_keras_object(keras.saving.serialize_keras_object(cosine))
    assert isinstance(restored, WarmupSchedule) and restored.get_config() == cosine.get_config()
    optimizer = keras.optimizers.Adam(learning_rate=schedule)
    again = keras.optimizers.Adam.from_config(optimizer.get_config())
    assert isinstance(again.learning_rate, WarmupSchedule) or float(again.learning_rate) > 0


def test_halving_schedule_gives_keras_piecewise_rates_and_reads_its_total_when_run():
    """HalvingSchedule replaces Keras' PiecewiseConstantDecay (the same rates, to the bit) with its total in a
    variable: a traced step sees a new total without being traced again (a final fit restarting a compiled model)."""
    import tensorflow as tf

    schedule = HalvingSchedule(3e-3, total_steps=400)
    steps = tf.constant(np.arange(0, 520, dtype=np.int64))
    keras_rates = keras.optimizers.schedules.PiecewiseConstantDecay([132, 265], [3e-3, 3e-3 / 2, 3e-3 / 4])
    np.testing.assert_array_equal(np.asarray(schedule(steps)), np.asarray(keras_rates(steps)))
    traced = tf.function(lambda step: schedule(step))
    assert float(traced(tf.constant(200, tf.int64))) == np.float32(1.5e-3)
    schedule.set_total_steps(900)
    assert float(traced(tf.constant(200, tf.int64))) == np.float32(3e-3)  # the boundary moved to 299
    assert traced.experimental_get_tracing_count() == 1
    restored = keras.saving.deserialize_keras_object(keras.saving.serialize_keras_object(schedule))
    assert isinstance(restored, HalvingSchedule) and restored.get_config() == {"learning_rate": 3e-3, "total_steps": 900}


@pytest.mark.parametrize("make, message", [
    (lambda: TransformerEncoderBlock(10, 3, 8),
     r"d_model must be divisible by num_heads=3 \(num_heads=2 divides it\); got 10"),
    (lambda: InterpretableAttention(4, 6),
     r"hidden_size must be divisible by num_heads=4 \(num_heads=3 divides it\); got 6"),
    (lambda: InterpretableAttention(2, 6.0), "hidden_size must be an integer >= 1; got 6.0"),
    (lambda: TransformerEncoderBlock(8, 2, 8, dropout=-0.1), "dropout must be in \\[0, 1\\); got -0.1"),
    (lambda: TransformerEncoderBlock(8, 2, 8, norm="group"), "norm must be one of layer, batch; got 'group'"),
    (lambda: LuongAttention("cosine"), "score must be one of dot, general; got 'cosine'"),
    (lambda: PositionalEncoding("rotary"), "positional must be one of sinusoidal, learned"),
    (lambda: WarmupSchedule(warmup_steps=0), "warmup_steps must be an integer >= 1; got 0"),
    (lambda: HalvingSchedule(total_steps=2), "total_steps must be an integer >= 3; got 2"),
    (lambda: VariableSelection(3, 4, variable_dropout=1.0), "variable_dropout must be in \\[0, 1\\); got 1.0"),
    (lambda: VariableSelection(3, 4, kept=(3,)), "kept must be positions in 0..2; got \\[3\\]"),
])
def test_layer_argument_errors(make, message):
    with pytest.raises(ConfigError, match=message):
        make()


def test_variable_dropout_drops_whole_variables_in_training_only():
    """tft's variable dropout: in training each window loses each input variable with the given chance, at every step
    and in every unit at once (the rest scaled by 1 / (1 - rate)); at inference the layer is the one without it, and
    the setting survives get_config."""
    keras.utils.set_random_seed(0)
    x = RNG.normal(size=(64, 5, 3)).astype("float32")
    layer, plain = VariableSelection(3, 4, variable_dropout=0.5), VariableSelection(3, 4)
    layer(x), plain(x)
    plain.set_weights(layer.get_weights())
    np.testing.assert_allclose(layer(x, training=False), plain(x, training=False), rtol=1e-6)
    mask = keras.ops.convert_to_numpy(layer.drop_variables(np.ones((64, 5, 3, 4), "float32"), training=True))
    assert set(np.unique(mask)) == {0.0, 2.0}  # dropped, or kept and scaled
    assert (mask == mask[:, :1, :, :1]).all()  # one draw per window and variable: the same at every step and unit
    assert 0.3 < (mask[:, 0, :, 0] == 0).mean() < 0.7
    assert VariableSelection.from_config(layer.get_config()).variable_dropout == 0.5
    assert VariableSelection(3, 4).drop_variables is None


def test_variable_dropout_never_drops_the_kept_variables():
    """tft's variable_dropout_on="covariates": the target and the time index (``kept``) pass whole in training. With
    the one droppable variable all zeros (its embedding then the zero bias, the same dropped or not) the training
    output equals the inference output; without ``kept`` the other two are dropped in some windows and it does not."""
    keras.utils.set_random_seed(0)
    x = RNG.normal(size=(64, 5, 3)).astype("float32")
    x[..., 1] = 0.0
    kept, every = VariableSelection(3, 4, variable_dropout=0.5, kept=(0, 2)), VariableSelection(3, 4, variable_dropout=0.5)
    kept(x), every(x)
    every.set_weights(kept.get_weights())
    np.testing.assert_allclose(kept(x, training=True), kept(x, training=False), rtol=1e-5, atol=1e-6)
    assert not np.allclose(every(x, training=True), every(x, training=False), atol=1e-3)
    assert VariableSelection.from_config(kept.get_config()).kept == (0, 2)


@pytest.mark.parametrize("shape, context", [((16, 5, 3), None), ((16, 3), (16, 4))])
def test_stacked_variable_grns_compute_what_one_layer_per_variable_did(shape, context):
    """The variables' GRNs as one stack of weights are the same function as the layout saved before (one
    GatedResidualNetwork per variable): each variable's weights copied into its slice of the stack give the same
    selection and weights, over a sequence and a static vector, with a context; a config saved before the stack
    (without the key) loads in the layout it was saved in."""
    keras.utils.set_random_seed(0)
    x = RNG.normal(size=shape).astype("float32")
    inputs = x if context is None else [x, RNG.normal(size=context).astype("float32")]
    legacy, stacked = VariableSelection(3, 4, stacked=False), VariableSelection(3, 4)
    legacy(inputs), stacked(inputs)
    stacked.kernel.assign(legacy.kernel), stacked.bias.assign(legacy.bias)
    stacked.selection.set_weights(legacy.selection.get_weights())
    for name, part in (("hidden", "kernel"), ("hidden", "bias"), ("intermediate", "kernel"), ("intermediate", "bias"),
                       ("gate", "kernel"), ("gate", "bias")):
        getattr(stacked, f"{name}_{part}").assign(np.stack([getattr(getattr(g, name), part) for g in legacy.each]))
    stacked.norm_gamma.assign(np.stack([g.norm.gamma for g in legacy.each]))
    stacked.norm_beta.assign(np.stack([g.norm.beta for g in legacy.each]))
    for got, want in zip(stacked(inputs, return_weights=True), legacy(inputs, return_weights=True)):
        np.testing.assert_allclose(got, want, rtol=1e-5, atol=1e-5)
    # the same seed draws the same initial weights and training dropout masks in either layout (figures stay)
    first = []
    for layout in (False, True):
        keras.utils.set_random_seed(1)
        layer = VariableSelection(3, 4, dropout=0.5, stacked=layout)
        layer(inputs)
        first.append((layer, layer(inputs, training=True)))
    (legacy, legacy_out), (stacked, stacked_out) = first
    np.testing.assert_array_equal(stacked.gate_kernel, np.stack([g.gate.kernel for g in legacy.each]))
    np.testing.assert_array_equal(stacked.hidden_kernel, np.stack([g.hidden.kernel for g in legacy.each]))
    np.testing.assert_allclose(stacked_out, legacy_out, rtol=1e-5, atol=1e-5)
    saved_before = {k: v for k, v in legacy.get_config().items() if k != "stacked"}
    assert len(VariableSelection.from_config(saved_before).each) == 3
    assert VariableSelection.from_config(stacked.get_config()).stacked and not stacked.each


@pytest.mark.parametrize("small", [2 ** 15, 8])  # every weight small; or the 40-number one with moments of its own
def test_adam_steps_equal_keras_adam_to_the_bit_when_a_weight_has_no_gradient(small, monkeypatch):
    """tsattn's Adam against Keras' on the same weights and gradients, step by step; at the second step one small
    weight has no gradient, which Keras skips (its moments and value unchanged): the shared moments must too."""
    from tsattn import layers

    monkeypatch.setattr(layers.Adam, "SMALL", small)
    rng = np.random.default_rng(0)
    shapes = [(3, 2), (4,), (40,)]
    start = [rng.normal(size=shape).astype("float32") for shape in shapes]
    steps = [[rng.normal(size=shape).astype("float32") for shape in shapes] for _ in range(3)]
    steps[1][1] = None
    found = []
    for adam in (layers.Adam, keras.optimizers.Adam):
        weights = [keras.Variable(value) for value in start]
        optimizer = adam(learning_rate=0.01)
        optimizer.build(weights)
        states = []
        for grads in steps:
            optimizer.apply([None if g is None else keras.ops.convert_to_tensor(g) for g in grads], weights)
            states.append([keras.ops.convert_to_numpy(w).copy() for w in weights])
        found.append(states)
    assert found[0][1][1].tobytes() == found[0][0][1].tobytes()  # skipped: unchanged
    for ours, theirs in zip(*found):
        for a, b in zip(ours, theirs, strict=True):
            np.testing.assert_array_equal(a, b)
