"""What the task needs of the G1's asset files. A folder named by $SACSCALE_G1_ASSETS may hold
any MuJoCo model under the G1's file names: a g1.xml without the G1's bodies failed deep in
the build (`'NoneType' object has no attribute 'add_geom'`), and a g1_mjx.xml without its
colliders built another model without a word. Judged on the parsed files, before the build."""

from __future__ import annotations

from sacscale.mujoco_lib import mujoco

ROOT_BODY = "pelvis"  # carries the free joint; its height is the standing pose's first number
FEET = ("left_ankle_roll_link", "right_ankle_roll_link")
SOLE_SPHERES = 4  # per foot: Menagerie's r=0.005 spheres, the task's foot contact sensors
SITES = ("imu_in_pelvis", "imu_in_torso", "left_foot", "right_foot")  # the sensors' sites

# g1_mjx.xml's primitive colliders the task takes (not its feet), with the body of each.
MJX_COLLIDERS = {
    "pelvis_collision": "pelvis",
    "torso_collision": "torso_link",
    "head_collision": "torso_link",
    **{
        f"{side}_{part}": f"{side}_{body}"
        for side in ("left", "right")
        for part, body in (
            ("hip_collision", "hip_roll_link"),
            ("thigh_collision", "hip_yaw_link"),
            ("shin_collision", "knee_link"),
            ("linkage_brace_collision", "knee_link"),
            ("shoulder_yaw_collision", "shoulder_yaw_link"),
            ("elbow_yaw_collision", "elbow_link"),
            ("wrist_collision", "wrist_pitch_link"),
            ("hand_collision", "wrist_yaw_link"),
        )
    },
}


def is_mjx_collider(geom: mujoco.MjsGeom) -> bool:
    """A primitive collider of g1_mjx.xml the task takes: not a visual mesh, not MJX's own feet."""
    return geom.name.endswith("_collision") and "foot" not in geom.name


def g1_problem(spec: mujoco.MjSpec, joint_names: tuple[str, ...]) -> str | None:
    """What g1.xml lacks: a body, site or joint the task reads, its joint count (one free joint
    and a hinge per action, in action order), or a foot's sole spheres."""
    bodies = {b.name for b in spec.bodies}
    for body in (ROOT_BODY, *FEET, *MJX_COLLIDERS.values()):
        if body not in bodies:
            return f"g1.xml has no body {body!r}, which the task needs"
    sites = {s.name for s in spec.sites}
    if missing := next((s for s in SITES if s not in sites), None):
        return f"g1.xml has no site {missing!r}, which the task needs"
    joints = list(spec.joints)
    hinges = [j.name for j in joints if j.type == mujoco.mjtJoint.mjJNT_HINGE]
    if missing := next((j for j in joint_names if j not in hinges), None):
        return f"g1.xml has no hinge joint {missing!r}, which the task needs"
    free = joints[0] if joints else None
    if free is None or free.type != mujoco.mjtJoint.mjJNT_FREE or free.parent.name != ROOT_BODY:
        return f"g1.xml's first joint is not a free joint of body {ROOT_BODY!r}, which the task needs"
    if [j.name for j in joints[1:]] != list(joint_names):
        return (f"g1.xml has {len(joints)} joints where the task needs {1 + len(joint_names)}, in this order: "
                f"the free joint, then one hinge per action ({len(joint_names)} actions: "
                f"{joint_names[0]} ... {joint_names[-1]})")
    for foot in FEET:
        spheres = [g for g in spec.body(foot).geoms if g.type == mujoco.mjtGeom.mjGEOM_SPHERE]
        if len(spheres) != SOLE_SPHERES:
            return f"g1.xml's body {foot!r} has {len(spheres)} sole spheres where the task needs {SOLE_SPHERES}"
    return None


def mjx_problem(spec: mujoco.MjSpec) -> str | None:
    """What g1_mjx.xml lacks or adds: the task's colliders are exactly its, each on its body."""
    found = {g.name: g.parent.name for g in spec.geoms if is_mjx_collider(g)}
    for name, body in MJX_COLLIDERS.items():
        if name not in found:
            return f"g1_mjx.xml has no geom {name!r}, which the task needs"
        if found[name] != body:
            return f"g1_mjx.xml's geom {name!r} is on body {found[name]!r}, where the task needs it on {body!r}"
    if extra := next((name for name in found if name not in MJX_COLLIDERS), None):
        return f"g1_mjx.xml has a collider {extra!r} the task's model does not have"
    return None
